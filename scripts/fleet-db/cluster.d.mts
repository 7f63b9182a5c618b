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
export function startCluster(options?: { bin?: string; log?: (line: string) => void }): Promise<Cluster>;
