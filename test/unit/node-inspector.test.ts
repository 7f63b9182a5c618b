// bin/toolhost.js is CommonJS and cannot import src/node-inspector.ts: it writes
// the unreachable inspector address itself, in its shebang (how npm's link and
// a client configuration start the host) and in doctor's re-exec. A change of
// the constant that left the binary behind would leave the host's own start
// open to SIGUSR1 (test/e2e/sigusr1-inspector.test.ts shows what that means).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UNREACHABLE_INSPECTOR_FLAG } from '../../src/node-inspector.js';
import { ISOLATE_PROCESS_NODE_FLAGS } from '../../src/runner/isolate/isolate-sandbox.js';

const BIN = fileURLToPath(new URL('../../bin/toolhost.js', import.meta.url));

describe('the unreachable inspector address', () => {
  const source = readFileSync(BIN, 'utf8');

  it('is an address no local socket listens on (TEST-NET-1)', () => {
    expect(UNREACHABLE_INSPECTOR_FLAG).toMatch(/^--inspect-port=192\.0\.2\.\d+:\d+$/);
  });

  it("is in bin/toolhost.js's shebang, so the host's own start is covered", () => {
    const shebang = source.split('\n', 1)[0]!;
    expect(shebang.startsWith('#!/usr/bin/env -S node ')).toBe(true);
    expect(shebang.split(' ')).toContain(UNREACHABLE_INSPECTOR_FLAG);
  });

  it("is in doctor's re-exec of bin/toolhost.js", () => {
    const reExec = source.split('\n').find((line) => line.includes("'--no-node-snapshot'") && line.includes('__filename'));
    expect(reExec).toBeDefined();
    expect(reExec).toContain(`'${UNREACHABLE_INSPECTOR_FLAG}'`);
  });

  it("is among an isolate process's Node flags", () => {
    expect(ISOLATE_PROCESS_NODE_FLAGS).toContain(UNREACHABLE_INSPECTOR_FLAG);
  });
});
