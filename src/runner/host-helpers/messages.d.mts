// The messages between the host and its spawner process (spawner.mjs, over its
// IPC channel). Both run with the host's rights, outside any sandbox.

/** Start one process tool. fd4: base64 bytes the child reads on fd 4; files: host paths opened read-only on fds 5, 6, … */
export interface SpawnerSpawnMessage {
  readonly type: 'spawn';
  readonly id: number;
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly fd4?: string;
  readonly files?: readonly string[];
}

/** Diagnostics: the spawner's own process.memoryUsage() and live tool count. */
export interface SpawnerMemoryRequest {
  readonly type: 'memory';
  readonly id: number;
}

export type HostToSpawnerMessage = SpawnerSpawnMessage | SpawnerMemoryRequest;

export type SpawnerToHostMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'spawned'; readonly id: number; readonly pid: number }
  /** Sent with the pipe end as the IPC handle, fds 0..3 in order. */
  | { readonly type: 'stdio'; readonly id: number; readonly fd: number }
  | { readonly type: 'failed'; readonly id: number; readonly errorCode: string }
  | { readonly type: 'exit'; readonly id: number; readonly exitCode: number | null; readonly signal: string | null }
  | { readonly type: 'memory'; readonly id: number; readonly usage: NodeJS.MemoryUsage; readonly liveGroups: number };
