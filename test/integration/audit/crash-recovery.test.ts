// kill -9 a host while its call is `started`: the next host to open the state
// folder finds it `interrupted`, and its idempotency key is held until reconciled.
import { describe, expect, it } from 'vitest';
import { Journal } from '../../../src/audit/journal.js';
import { spawnFixtureHost, useJournalProcessTest } from './journal-processes.js';

const t = useJournalProcessTest();

describe('a host killed mid-call', () => {
  it('leaves a started record that the next open marks interrupted', async () => {
    const host = spawnFixtureHost('begin-and-wait', t.temp.stateDir, t.marker);
    t.hosts.push(host);
    const ready = await host.ready;
    const callId = String(ready['id']);

    // While the host lives, another host on the folder must not touch its call.
    const neighbour = Journal.open(t.temp.stateDir);
    expect(neighbour.get(callId)?.status).toBe('started');
    expect(neighbour.findByIdempotencyKey('fs.write', 'key-1')).toMatchObject({ id: callId, status: 'started' });
    neighbour.close();

    host.child.kill('SIGKILL');
    expect(await host.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const restarted = Journal.open(t.temp.stateDir);
    try {
      expect(restarted.get(callId)).toMatchObject({ status: 'interrupted', hostId: ready['hostId'], reconciliation: null });
      expect(restarted.findByIdempotencyKey('fs.write', 'key-1')).toMatchObject({ id: callId, status: 'interrupted', replay: null });
      expect(restarted.query({ status: 'interrupted' }).map((record) => record.id)).toEqual([callId]);
      restarted.reconcile(callId, 'rerun');
      expect(restarted.findByIdempotencyKey('fs.write', 'key-1')).toBeUndefined();
    } finally {
      restarted.close();
    }
  });

  it('a journal that never reopened is recovered by a reader (toolhost audit)', async () => {
    const host = spawnFixtureHost('begin-and-wait', t.temp.stateDir, t.marker);
    t.hosts.push(host);
    const callId = String((await host.ready)['id']);
    host.child.kill('SIGKILL');
    await host.exited;
    const reader = Journal.open(t.temp.stateDir, { asHost: false });
    try {
      expect(reader.get(callId)?.status).toBe('interrupted');
    } finally {
      reader.close();
    }
  });
});
