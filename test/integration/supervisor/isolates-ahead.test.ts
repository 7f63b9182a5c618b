// `serve` starts its isolate tools' isolate processes ahead (SPEC section 3.1: "started
// ahead"), in the background and one at a time: a tool's first call finds its process up
// and starts none. A host built without the option starts the process on the first call.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pollUntil } from '../../helpers/proc-scan.js';
import { closeAllHosts, FIXTURE_MANIFESTS, resultOf, startHost } from '../../helpers/supervisor-host.js';

// One isolate tool alone, so the host has exactly one process to start ahead.
const manifestDir = mkdtempSync(join(tmpdir(), 'toolhost-isolates-ahead-'));
for (const file of ['echo.yaml', 'echo.js']) copyFileSync(join(FIXTURE_MANIFESTS, file), join(manifestDir, file));

afterAll(async () => {
  await closeAllHosts();
  rmSync(manifestDir, { recursive: true, force: true });
});

describe('isolate processes started ahead', () => {
  it('are up before the first call, which starts none', async () => {
    const host = await startHost({ manifestDirs: [manifestDir], host: { startIsolatesAhead: true } });
    const processes = host.services.isolateProcesses;
    const up = await pollUntil(() => ({ done: processes.startedCount === 1, value: processes.startedCount }), 60_000);
    expect(up).toBe(1);
    resultOf(await host.call('echo', { value: 'first' }));
    expect(processes.startedCount).toBe(1);
  });

  it('are started by the first call without the option', async () => {
    const host = await startHost({ manifestDirs: [manifestDir] });
    const processes = host.services.isolateProcesses;
    expect(processes.startedCount).toBe(0);
    resultOf(await host.call('echo', { value: 'first' }));
    expect(processes.startedCount).toBe(1);
  });
});
