// The runner for each sandbox mode is created on first use, and closing the
// host cancels what is in flight, records it, and refuses what comes after.
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteJournal as Journal } from '../../../src/audit/sqlite/sqlite-journal.js';
import type { CallOutcome } from '../../../src/supervisor/types.js';
import { closeAllHosts, errorOf, resultOf, startHost } from '../../helpers/supervisor-host.js';

afterAll(closeAllHosts);

describe('runners by mode', () => {
  it('runs a worker tool in a worker thread', async () => {
    const host = await startHost();
    const progress: unknown[] = [];
    const outcome = resultOf(await host.call('node_info', {}, { onProgress: (event) => progress.push(event) }));
    expect(outcome.structuredContent).toEqual({ isMainThread: false, major: Number(process.versions.node.split('.')[0]) });
    expect(progress).toEqual([{ progress: 1, total: 1, message: 'looked' }]);
  });
});

describe('close', () => {
  it('cancels in-flight calls, journals them, and refuses later calls', async () => {
    const host = await startHost();
    let pending: Promise<CallOutcome> | undefined;
    const started = new Promise<void>((resolve) => {
      pending = host.call('spin', {}, { onEvent: (event) => event.type === 'tool.started' && resolve() });
    });
    await started;
    await host.close();
    const outcome = await (pending as Promise<CallOutcome>);
    expect(errorOf(outcome).code).toBe('cancelled');
    expect(errorOf(await host.call('echo', { value: 1 })).code).toBe('cancelled');
    const journal = Journal.open(host.stateDir, { asHost: false });
    try {
      expect(journal.get(outcome.callId)).toMatchObject({ tool: 'spin', status: 'cancelled', errorCode: 'cancelled' });
    } finally {
      journal.close();
    }
  });

  it('is idempotent', async () => {
    const host = await startHost();
    await Promise.all([host.supervisor.close(), host.supervisor.close()]);
    await host.close();
  });
});
