// Types of cluster.mjs, for the TypeScript test setup and helpers.
export interface Cluster {
  readonly root: string;
  readonly socketDir: string;
  readonly port: number;
  readonly superuser: string;
  readonly passwordUser: string;
  readonly password: string;
  readonly bin: string;
  psql(sql: string): string;
  pause(): void;
  resume(): void;
  stop(): void;
}
export function findPostgresBin(): string | undefined;
/** `port`: the first port to try (tests); by default a free one. A port taken before the server binds it is replaced. */
export function startCluster(options?: { bin?: string; log?: (line: string) => void; port?: number }): Promise<Cluster>;
