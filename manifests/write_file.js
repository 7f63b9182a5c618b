// write_file: runs inside an isolate, so no imports (and no TextEncoder: the
// isolate has only what V8 itself provides); only ctx.fs is used.
export default async function writeFile(args, ctx) {
  const existing = await statOrUndefined(ctx, args.path);
  if (existing && existing.type !== 'file') throw new Error(`${args.path} exists and is not a file (it is a ${existing.type})`);
  if (existing && args.createOnly) throw new Error(`${args.path} already exists and createOnly is set`);
  await ctx.fs.writeText(args.path, args.text);
  return { path: args.path, bytes: utf8Length(args.text), created: existing === undefined };
}

async function statOrUndefined(ctx, path) {
  try {
    return await ctx.fs.stat(path);
  } catch (error) {
    // Only "not found" means "create it": a refused or unreadable path must stay an error.
    if (error && error.code === 'not_found') return undefined;
    throw error;
  }
}

function utf8Length(text) {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0);
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}
