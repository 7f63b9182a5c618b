// The built CLI run as a user runs it: `node --no-node-snapshot dist/src/cli/main.js …`
// with one test file's process marker in its environment, its exit code and
// output read back, never rejecting (a failing command is a result to assert on).
import { execa } from 'execa';
import { BUILT_MAIN } from './mcp-clients.js';

export interface CliRun {
  readonly code: number | undefined;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliRunOptions {
  /** TOOLHOST_TEST_MARKER: how the test finds (and proves gone) the processes the command started. */
  readonly marker: string;
  /** Arguments after the command's own (`--manifests …`, `--state …`). */
  readonly flags?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly timeoutMs?: number;
}

/** Runs `toolhost …args …flags` from dist/ and returns how it ended. */
export async function runBuiltCli(args: readonly string[], options: CliRunOptions): Promise<CliRun> {
  const result = await execa(process.execPath, ['--no-node-snapshot', BUILT_MAIN, ...args, ...(options.flags ?? [])], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    reject: false,
    env: { ...options.env, TOOLHOST_TEST_MARKER: options.marker },
    extendEnv: true,
    timeout: options.timeoutMs ?? 40_000,
  });
  return { code: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
}
