// memoryMb held by the kernel's memory controller (cgroup v1 on these
// machines: memory.limit_in_bytes with memsw), through a real host: a memory
// bomb in a namespaced process tool (one-shot and persistent) and in an
// upstream server is `memory_limit`, never a crash of the host, and the next
// call gets a fresh sandbox; a Node server that uses the global fetch
// (undici's llhttp is WebAssembly, which reserves far more address space than
// it uses) runs in 128 MiB; and the host leaves no cgroup behind.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAllHosts, errorOf, startHost, textOf, waitForNoProcesses, type TestHost } from '../../helpers/supervisor-host.js';
import { newMarker } from '../../helpers/proc-scan.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/memory', import.meta.url));
const marker = newMarker('memory');

let host: TestHost;
const seenDirs = new Set<string>();

beforeAll(async () => {
  host = await startHost({ manifestDirs: [FIXTURES], marker });
}, 180_000);

afterAll(async () => {
  await closeAllHosts();
  expect(await waitForNoProcesses(marker)).toEqual([]);
}, 180_000);

// Every cgroup the host made so far (the test checks they are all gone after it closes).
function noteCgroups(): void {
  for (const dir of host.services.cgroups.ownDirs) seenDirs.add(dir);
}

describe('memory by cgroup', () => {
  it('a one-shot namespaced process tool that touches more than its memoryMb is memory_limit; the next call runs', async () => {
    expect(JSON.parse(textOf(await host.call('hungry_tool', { mb: 16 })))).toEqual({ touched: 16 });
    noteCgroups();
    const error = errorOf(await host.call('hungry_tool', { mb: 512 }));
    noteCgroups();
    expect({ code: error.code, memoryMb: error.details['memoryMb'], reason: error.details['reason'] }).toEqual({ code: 'memory_limit', memoryMb: 64, reason: 'cgroup_oom' });
    expect(JSON.parse(textOf(await host.call('hungry_tool', { mb: 8 })))).toEqual({ touched: 8 });
  });

  it('a persistent process tool that does the same is memory_limit, and the pool replaces its process', async () => {
    expect(JSON.parse(textOf(await host.call('hungry_pool', { mb: 16 })))).toEqual({ touched: 16 });
    noteCgroups();
    const error = errorOf(await host.call('hungry_pool', { mb: 512 }));
    expect({ code: error.code, memoryMb: error.details['memoryMb'], reason: error.details['reason'] }).toEqual({ code: 'memory_limit', memoryMb: 64, reason: 'cgroup_oom' });
    expect(JSON.parse(textOf(await host.call('hungry_pool', { mb: 8 })))).toEqual({ touched: 8 });
    noteCgroups();
  });

  it('a Node server calls the global fetch (WebAssembly llhttp) within 128 MiB: only what it uses counts', async () => {
    // Its own loopback HTTP server, read through fetch: llhttp was instantiated and parsed the answer.
    expect(textOf(await host.call('hungry__fetch_wasm'))).toBe('hello from llhttp');
    noteCgroups();
  });

  it('a server that grows past its memoryMb is memory_limit, and the next call starts a fresh one', async () => {
    const error = errorOf(await host.call('hungry__grow'));
    noteCgroups();
    expect({ code: error.code, memoryMb: error.details['memoryMb'], reason: error.details['reason'], server: error.details['server'] }).toEqual({
      code: 'memory_limit',
      memoryMb: 128,
      reason: 'cgroup_oom',
      server: 'hungry',
    });
    expect(textOf(await host.call('hungry__ok'))).toBe('ok');
    noteCgroups();
  });

  it('leaves no cgroup behind once the host is closed, in either hierarchy', async () => {
    expect([...seenDirs].some((dir) => dir.includes('/memory/toolhost/'))).toBe(true);
    expect([...seenDirs].some((dir) => dir.includes('/pids/toolhost/'))).toBe(true);
    await host.close();
    expect(host.services.cgroups.ownDirs).toEqual([]);
    expect([...seenDirs].filter((dir) => existsSync(dir))).toEqual([]);
  });
});
