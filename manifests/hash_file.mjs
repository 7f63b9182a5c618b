// hash_file: runs in a worker thread, so Node's modules are available. The file
// is still read through ctx.fs, which keeps the tool inside its declared roots.
import { createHash } from 'node:crypto';

export default async function hashFile(args, ctx) {
  const text = await ctx.fs.readText(args.path);
  const bytes = Buffer.from(text, 'utf8');
  return { path: args.path, algorithm: 'sha256', digest: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
}
