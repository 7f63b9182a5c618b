// read_file: runs inside an isolate, so no imports; the disk is reached only
// through ctx.fs, relative to the first workspace root.
const MAX_FILE_BYTES = 8 * 1024 * 1024;
const DEFAULT_MAX_LINES = 2000;

export default async function readFile(args, ctx) {
  const startLine = args.startLine ?? 1;
  const maxLines = args.maxLines ?? DEFAULT_MAX_LINES;
  const info = await ctx.fs.stat(args.path);
  if (info.type !== 'file') throw new Error(`${args.path} is not a file (it is a ${info.type})`);
  if (info.size > MAX_FILE_BYTES) throw new Error(`${args.path} is ${info.size} bytes; read_file reads files up to ${MAX_FILE_BYTES} bytes`);
  const text = await ctx.fs.readText(args.path);
  const lines = splitLines(text);
  const from = Math.min(startLine, lines.length + 1);
  const selected = lines.slice(from - 1, from - 1 + maxLines);
  const endLine = from - 1 + selected.length;
  return {
    path: args.path,
    text: selected.join('\n'),
    startLine: from,
    endLine,
    totalLines: lines.length,
    truncated: endLine < lines.length,
  };
}

// A trailing newline ends the last line; it does not start an empty one.
function splitLines(text) {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
