// How many frames of the journal's WAL are not yet checkpointed, read from the
// wal-index (the `-shm` file every connection to a WAL database maps; its
// layout is part of SQLite's documented file format: walformat.html). The
// store asks before each batch whether the WAL is due for a checkpoint. The
// WAL file's size cannot tell: the store keeps the file at its size when the
// WAL starts over, so that a commit overwrites blocks the file already has
// instead of extending it (cutting the file back at each restart made the
// file system free and allocate its blocks again on every commit).
//
// The descriptor is never closed: POSIX locks belong to the process, and
// closing any descriptor of the file drops the locks every SQLite connection
// of this process holds on it, not only this store's (`serve` has a second,
// the console's reader, which may outlive the host's store). So there is one
// descriptor per wal-index file, shared, for as long as the file lives: the
// last connection to close a WAL database (in any process) deletes it, and the
// descriptor of a deleted one, which nothing else holds, is closed when a
// store opens the file SQLite made in its place.
import { closeSync, fstatSync, openSync, readSync, statSync, constants } from 'node:fs';
import { endianness } from 'node:os';

/** The wal-index header's version (WALINDEX_MAX_VERSION); another layout is not read. */
const WAL_INDEX_VERSION = 3007000;
/** Bytes read: the header (48 bytes, written twice) and the checkpoint info's nBackfill. */
const HEAD_BYTES = 100;
/** mxFrame: the last valid frame in the WAL, in the first copy of the header. */
const MX_FRAME_AT = 16;
/** nBackfill: frames already copied back into the database (WalCkptInfo, after both header copies). */
const BACKFILL_AT = 96;

/** The descriptors opened so far, by `-shm` path (see the header: never closed). */
const descriptors = new Map<string, number>();

/** The WAL's frames since it last started over, and those of them no checkpoint has copied yet. */
export interface WalFrames {
  readonly total: number;
  readonly pending: number;
}

export class WalIndex {
  readonly #fd: number | undefined;
  readonly #buffer = Buffer.alloc(HEAD_BYTES);
  readonly #read32: (offset: number) => number;

  /** Opens `<database>-shm` for reading (once per process); a database whose wal-index cannot be opened reads as undefined. */
  constructor(databaseFile: string) {
    const path = `${databaseFile}-shm`;
    let fd = descriptors.get(path);
    if (fd !== undefined && fstatSync(fd).ino !== statSync(path, { throwIfNoEntry: false })?.ino) {
      closeSync(fd);
      descriptors.delete(path);
      fd = undefined;
    }
    if (fd === undefined) {
      try {
        fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
        descriptors.set(path, fd);
      } catch {
        fd = undefined;
      }
    }
    this.#fd = fd;
    const buffer = this.#buffer;
    // The wal-index is in the machine's own byte order.
    this.#read32 = endianness() === 'LE' ? (offset) => buffer.readUInt32LE(offset) : (offset) => buffer.readUInt32BE(offset);
  }

  /**
   * Frames in the WAL that no checkpoint has copied yet; undefined when the
   * wal-index cannot be read or is not the layout this knows. Read without
   * SQLite's locks: a read torn by a concurrent commit only moves the next
   * checkpoint by a batch.
   */
  pendingFrames(): number | undefined {
    return this.frames()?.pending;
  }

  /**
   * The WAL's frames since it last started over (`total`) and those of them no
   * checkpoint has copied yet (`pending`); undefined as pendingFrames.
   */
  frames(): WalFrames | undefined {
    if (this.#fd === undefined) return undefined;
    try {
      if (readSync(this.#fd, this.#buffer, 0, HEAD_BYTES, 0) < HEAD_BYTES) return undefined;
    } catch {
      return undefined;
    }
    if (this.#read32(0) !== WAL_INDEX_VERSION) return undefined;
    const total = this.#read32(MX_FRAME_AT);
    return { total, pending: Math.max(0, total - this.#read32(BACKFILL_AT)) };
  }
}
