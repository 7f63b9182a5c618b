// bubblewrap's --json-status-fd lines, as the host reads them.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readSandboxExitCode, readSandboxStatus } from '../../../../src/runner/bwrap/status.js';

function feed(...chunks: string[]): Promise<number | undefined> {
  const pipe = new PassThrough();
  const code = readSandboxExitCode(pipe);
  for (const chunk of chunks) pipe.write(chunk);
  pipe.end();
  return code;
}

describe('readSandboxExitCode', () => {
  it('reads the exit code bubblewrap writes after the start line', async () => {
    expect(await feed('{ "child-pid": 11732, "mnt-namespace": 4026532177, "pid-namespace": 4026532178 }\n', '{ "exit-code": 3 }\n')).toBe(3);
  });

  it('reads a line split across chunks, and 128 + the signal of a killed command', async () => {
    expect(await feed('{ "child-pid": 7 }\n{ "exit-', 'code": 137 }\n')).toBe(137);
  });

  it('answers undefined when the pipe closes without an exit code (bubblewrap itself was killed)', async () => {
    expect(await feed('{ "child-pid": 7 }\n')).toBeUndefined();
    expect(await feed()).toBeUndefined();
  });

  it('ignores what is not an integer exit code, and gives up on a flood', async () => {
    expect(await feed('{ "exit-code": "0" }\n{ "exit-code": 1.5 }\nnot json "exit-code"\n')).toBeUndefined();
    expect(await feed('x'.repeat(10_000), '{ "exit-code": 0 }\n')).toBeUndefined();
  });
});

describe('readSandboxStatus', () => {
  it("gives the sandbox's child pid from the start line, before the command ends", async () => {
    const pipe = new PassThrough();
    const status = readSandboxStatus(pipe);
    pipe.write('{ "child-pid": 11732, "mnt-namespace": 4026532177 }\n');
    expect(await status.childPid).toBe(11732);
    pipe.end('{ "exit-code": 0 }\n');
    expect(await status.exitCode).toBe(0);
    const none = readSandboxStatus(new PassThrough().end());
    expect(await none.childPid).toBeUndefined();
  });
});
