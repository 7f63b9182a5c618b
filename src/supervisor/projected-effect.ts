// The projected effect of a call (SPEC section 2 `effects`, section 5 step 6):
// for a tool that declares the paths it writes, each path as the tool would
// resolve it (from its first workspace root), where it lies, and a unified
// diff of a text write against the file as it is now. Computed only for a call
// that needs an approval. The host reads the current file itself, so it reads
// only what the tool could: a regular file inside the tool's roots (symlinks
// resolved first), opened without blocking and read up to a bound. Everything
// read is redacted like a tool's output: the prompt reaches the client.
import { constants, type Stats } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { ProjectedWrite } from '../audit/approval-record.js';
import type { Manifest, ManifestRoot } from '../registry/manifest.js';
import type { Redactor } from './redact.js';
import { diffTexts } from './text-diff.js';

/** Largest current file or new text the host diffs; larger ones are summarised. */
export const MAX_DIFF_SOURCE_BYTES = 256 * 1024;
/** Longest path shown. */
const MAX_PATH_CHARS = 4096;

/** The writes of a call to a tool that declares `effects`; empty when it declares none. */
export async function projectEffects(manifest: Manifest, args: Readonly<Record<string, unknown>>, redact: Redactor): Promise<ProjectedWrite[]> {
  const effects = manifest.effects;
  if (effects === undefined) return [];
  const content = effects.content === null ? undefined : args[effects.content];
  const projected: ProjectedWrite[] = [];
  for (const argument of effects.writes) {
    projected.push(
      await projectWrite(
        argument,
        args[argument],
        manifest.roots,
        effects.content === null ? { kind: 'none' } : { kind: 'argument', name: effects.content, value: content },
        redact,
      ),
    );
  }
  return projected;
}

type NewContent = { readonly kind: 'none' } | { readonly kind: 'argument'; readonly name: string; readonly value: unknown };

async function projectWrite(argument: string, value: unknown, roots: readonly ManifestRoot[], content: NewContent, redact: Redactor): Promise<ProjectedWrite> {
  if (typeof value !== 'string' || value === '') {
    return { argument, path: null, where: 'no_path', summary: value === undefined ? 'no path given' : 'not a path (not a non-empty string)', diff: null };
  }
  const first = roots[0];
  const path = redact((first === undefined ? resolve('/', value) : resolve(first.path, value)).slice(0, MAX_PATH_CHARS));
  if (first === undefined) return { argument, path, where: 'outside_roots', summary: 'the tool declares no workspace root: the write will be refused', diff: null };
  const lexical = rootOf(resolve(first.path, value), roots);
  if (lexical === undefined) return { argument, path, where: 'outside_roots', summary: 'outside the workspace roots of the tool: the write will be refused', diff: null };
  // Symbolic links inside the workspace are followed as the tool's open would follow them.
  const real = await realpathOfNearest(resolve(first.path, value));
  const root = rootOf(real, roots);
  if (root === undefined)
    return { argument, path, where: 'outside_roots', summary: 'leads outside the workspace roots through a symbolic link: the write will be refused', diff: null };
  if (root.access !== 'read_write') return { argument, path, where: 'read_only_root', summary: 'in a read-only root of the tool: the write will be refused', diff: null };
  const current = await readCurrent(real);
  const label = relative(first.path, real) || basename(real);
  return { argument, path, where: 'writable_root', ...describeWrite(label, current, content, redact) };
}

type Current =
  | { readonly kind: 'missing' }
  | { readonly kind: 'text'; readonly text: string; readonly bytes: number }
  | { readonly kind: 'binary'; readonly bytes: number }
  | { readonly kind: 'too_large'; readonly bytes: number }
  | { readonly kind: 'not_a_file'; readonly what: string }
  | { readonly kind: 'unreadable'; readonly reason: string };

function describeWrite(label: string, current: Current, content: NewContent, redact: Redactor): { summary: string; diff: string | null } {
  const now = describeCurrent(current);
  if (current.kind === 'not_a_file' || current.kind === 'unreadable') return { summary: now, diff: null };
  if (content.kind === 'none') return { summary: now, diff: null };
  if (typeof content.value !== 'string') return { summary: `${now}; the new content (${content.name}) is not text: no diff`, diff: null };
  const newBytes = Buffer.byteLength(content.value, 'utf8');
  if (newBytes > MAX_DIFF_SOURCE_BYTES) return { summary: `${now} with ${newBytes} bytes of new text: too large to diff`, diff: null };
  if (current.kind === 'binary' || current.kind === 'too_large') return { summary: `${now} with ${newBytes} bytes of text: no diff`, diff: null };
  const before = current.kind === 'missing' ? null : current.text;
  if (before === content.value) return { summary: `${now}: the same text, no change`, diff: null };
  // Both texts are redacted before the diff: a secret in the file is not shown, nor half of one.
  const diff = diffTexts(label, before === null ? null : redact(before), redact(content.value));
  if (!diff.ok) return { summary: `${now}: too many changes to diff within bounds`, diff: null };
  return { summary: `${now} (+${diff.added} -${diff.removed} lines${diff.truncated ? ', diff cut' : ''})`, diff: diff.diff };
}

function describeCurrent(current: Current): string {
  switch (current.kind) {
    case 'missing':
      return 'creates a new file';
    case 'text':
      return `replaces a ${current.bytes}-byte text file`;
    case 'binary':
      return `replaces a ${current.bytes}-byte binary file`;
    case 'too_large':
      return `replaces a ${current.bytes}-byte file, too large to diff`;
    case 'not_a_file':
      return `the path is ${current.what}, not a regular file`;
    case 'unreadable':
      return `the current file cannot be read (${current.reason})`;
  }
}

// Non-blocking and without following a last link (the path is already resolved): a FIFO
// or a device in the workspace is described from fstat, never read.
async function readCurrent(path: string): Promise<Current> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'not_a_file', what: 'a symbolic link' };
    return { kind: 'unreadable', reason: code ?? 'error' };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { kind: 'not_a_file', what: kindOf(stats) };
    if (stats.size > MAX_DIFF_SOURCE_BYTES) return { kind: 'too_large', bytes: stats.size };
    const buffer = Buffer.alloc(Math.min(stats.size, MAX_DIFF_SOURCE_BYTES) + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    // Grew past the bound since fstat: summarised, never read further.
    if (bytesRead > MAX_DIFF_SOURCE_BYTES) return { kind: 'too_large', bytes: bytesRead };
    const bytes = buffer.subarray(0, bytesRead);
    if (bytes.includes(0)) return { kind: 'binary', bytes: bytesRead };
    try {
      return { kind: 'text', text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), bytes: bytesRead };
    } catch {
      return { kind: 'binary', bytes: bytesRead };
    }
  } catch (error) {
    return { kind: 'unreadable', reason: (error as NodeJS.ErrnoException).code ?? 'error' };
  } finally {
    await handle.close();
  }
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** The root holding `path` (roots are absolute and resolved at load); undefined when none does. */
function rootOf(path: string, roots: readonly ManifestRoot[]): ManifestRoot | undefined {
  // The deepest root wins: a read-only folder inside a writable one is read-only.
  let best: ManifestRoot | undefined;
  for (const root of roots) {
    const inside = path === root.path || path.startsWith(root.path.endsWith(sep) ? root.path : root.path + sep);
    if (inside && (best === undefined || root.path.length > best.path.length)) best = root;
  }
  return best;
}

// The real path of the deepest part that exists, with the rest appended: a link anywhere
// on the way is resolved, and a file not yet created still has a place.
async function realpathOfNearest(path: string): Promise<string> {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      const real = await realpath(at);
      return rest.length === 0 ? real : join(real, ...rest.reverse());
    } catch {
      const parent = dirname(at);
      if (parent === at || !isAbsolute(parent)) return path;
      rest.push(basename(at));
      at = parent;
    }
  }
}
