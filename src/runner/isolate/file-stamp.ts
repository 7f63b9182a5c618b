// What identifies one version of a file cheaply (inode, size, modification
// time): a runner that gave up on a tool's module notices when it is replaced.
import { stat } from 'node:fs/promises';

export interface FileStamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

/** The file's stamp, or undefined when it cannot be read. */
export async function fileStampOf(path: string | undefined): Promise<FileStamp | undefined> {
  if (path === undefined) return undefined;
  try {
    const info = await stat(path);
    return { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs };
  } catch {
    return undefined;
  }
}

/** Whether two stamps name the same version of a file. */
export function sameStamp(a: FileStamp, b: FileStamp | undefined): boolean {
  return b !== undefined && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}
