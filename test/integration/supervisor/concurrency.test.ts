// Concurrency (SPEC section 5): mutating calls one at a time in FIFO order;
// read-only concurrency-safe calls side by side. Process fixtures, with a
// /proc scan proving none is left behind.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closeAllHosts, resultOf, startHost, waitForNoProcesses } from '../../helpers/supervisor-host.js';

const MARKER = `concurrency-${randomUUID()}`;

afterAll(async () => {
  await closeAllHosts();
  expect(await waitForNoProcesses(MARKER)).toEqual([]);
});

describe('concurrency', () => {
  it('runs mutating calls one at a time, in the order they arrived', async () => {
    const host = await startHost({ marker: MARKER });
    const log = join(host.root, 'ledger.log');
    const names = ['a', 'b', 'c', 'd'];
    const outcomes = await Promise.all(names.map((name) => host.call('ledger', { log, name })));
    for (const outcome of outcomes) resultOf(outcome);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toEqual(names.flatMap((name) => [`start ${name}`, `end ${name}`]));
  });

  it('runs read-only concurrency-safe calls side by side', async () => {
    const host = await startHost({ marker: MARKER });
    const dir = join(host.root, 'barrier');
    mkdirSync(dir);
    const outcomes = await Promise.all(['x', 'y', 'z'].map((name) => host.call('barrier', { dir, name, count: 3 })));
    expect(outcomes.map((outcome) => resultOf(outcome).structuredContent)).toEqual([
      { name: 'x', saw: 3 },
      { name: 'y', saw: 3 },
      { name: 'z', saw: 3 },
    ]);
  });

  it('holds read-only calls behind a mutating call that arrived first', async () => {
    const host = await startHost({ marker: MARKER });
    const log = join(host.root, 'mixed.log');
    const order: string[] = [];
    const mutating = host.call('ledger', { log, name: 'm' }).then((outcome) => (order.push('ledger'), outcome));
    const reading = host.call('echo', { value: 'r' }).then((outcome) => (order.push('echo'), outcome));
    resultOf(await mutating);
    resultOf(await reading);
    expect(order).toEqual(['ledger', 'echo']);
  });
});
