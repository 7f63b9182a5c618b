// list_dir: runs inside an isolate, so no imports; only ctx.fs.list is used.
export default async function listDir(args, ctx) {
  const root = args.path ?? '.';
  const depth = args.depth ?? 1;
  const maxEntries = args.maxEntries ?? 1000;
  const includeHidden = args.includeHidden ?? false;
  const entries = [];
  let truncated = false;
  // Breadth-first so a cut-off result still shows the top of the tree.
  const queue = [{ dir: root, prefix: '', level: 1 }];
  while (queue.length > 0 && !truncated) {
    const { dir, prefix, level } = queue.shift();
    const listed = await ctx.fs.list(dir);
    const sorted = [...listed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of sorted) {
      if (!includeHidden && entry.name.startsWith('.')) continue;
      if (entries.length >= maxEntries) {
        truncated = true;
        break;
      }
      const path = prefix + entry.name;
      entries.push({ path, type: entry.type, size: entry.size });
      // Symlinked folders are not followed: a link loop would never end.
      if (entry.type === 'directory' && level < depth) queue.push({ dir: joinPath(dir, entry.name), prefix: `${path}/`, level: level + 1 });
    }
  }
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { path: root, entries, truncated };
}

function joinPath(dir, name) {
  return dir === '.' || dir === '' ? name : `${dir.replace(/\/+$/, '')}/${name}`;
}
