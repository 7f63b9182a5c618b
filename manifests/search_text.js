// search_text: runs inside an isolate, so no imports; only ctx.fs is used.
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_FILES = 5000;
const MAX_LINE_CHARS = 300;
const SKIPPED_FOLDERS = new Set(['node_modules']);

export default async function searchText(args, ctx) {
  const maxMatches = args.maxMatches ?? 200;
  const matchLine = makeMatcher(args.query, args.regex ?? false, args.caseSensitive ?? true);
  const start = args.path ?? '.';
  const matches = [];
  let filesSearched = 0;
  let truncated = false;

  const startInfo = await ctx.fs.stat(start);
  const files = startInfo.type === 'file' ? [start] : [];
  const folders = startInfo.type === 'directory' ? [start] : [];
  while ((files.length > 0 || folders.length > 0) && !truncated) {
    if (files.length === 0) {
      const dir = folders.shift();
      const listed = await ctx.fs.list(dir);
      for (const entry of [...listed].sort(byName)) {
        if (entry.name.startsWith('.') || SKIPPED_FOLDERS.has(entry.name)) continue;
        const path = dir === '.' ? entry.name : `${dir.replace(/\/+$/, '')}/${entry.name}`;
        if (entry.type === 'directory') folders.push(path);
        else if (entry.type === 'file' && entry.size <= MAX_FILE_BYTES) files.push(path);
      }
      continue;
    }
    if (filesSearched >= MAX_FILES) {
      truncated = true;
      break;
    }
    const path = files.shift();
    filesSearched += 1;
    const text = await ctx.fs.readText(path);
    // A NUL byte means a binary file: no useful lines to show.
    if (text.includes('\u0000')) continue;
    const lines = text.split(/\r?\n/);
    for (let index = 0; index < lines.length; index += 1) {
      const column = matchLine(lines[index]);
      if (column < 0) continue;
      if (matches.length >= maxMatches) {
        truncated = true;
        break;
      }
      matches.push({ path, line: index + 1, column: column + 1, text: clip(lines[index]) });
    }
  }
  return { matches, filesSearched, truncated };
}

// Returns a function giving the 0-based column of the first match in a line, or -1.
function makeMatcher(query, isRegex, caseSensitive) {
  if (isRegex) {
    let pattern;
    try {
      pattern = new RegExp(query, caseSensitive ? 'u' : 'iu');
    } catch (error) {
      throw new Error(`query is not a valid regular expression: ${error.message}`);
    }
    return (line) => line.search(pattern);
  }
  if (caseSensitive) return (line) => line.indexOf(query);
  const needle = query.toLowerCase();
  return (line) => line.toLowerCase().indexOf(needle);
}

function clip(line) {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}

function byName(a, b) {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
