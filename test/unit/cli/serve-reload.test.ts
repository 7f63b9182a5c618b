import { describe, expect, it } from 'vitest';
import { HostReloader } from '../../../src/cli/serve-reload.js';
import { createSilentLogger } from '../../../src/log.js';

interface FakeHost {
  readonly supervisor: string;
  closed: boolean;
  close(): Promise<void>;
}

const fakeHost = (name: string): FakeHost => ({
  supervisor: name,
  closed: false,
  async close() {
    this.closed = true;
  },
});

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('HostReloader', () => {
  it('swaps to a host that loads, and closes the previous one once it is idle', async () => {
    const first = fakeHost('first');
    const second = fakeHost('second');
    const swaps: string[] = [];
    let releaseFirst!: () => void;
    const reloader = new HostReloader<FakeHost, string>(first, {
      build: async () => second,
      swap: async (next) => void swaps.push(next),
      whenIdle: (supervisor) => (supervisor === 'first' ? new Promise<void>((resolve) => (releaseFirst = resolve)) : Promise.resolve()),
      logger: createSilentLogger(),
    });
    reloader.reload();
    await settle();
    expect(reloader.current).toBe(second);
    expect(swaps).toEqual(['second']);
    expect(first.closed).toBe(false);
    releaseFirst();
    await settle();
    expect(first.closed).toBe(true);
    await reloader.close();
    expect(second.closed).toBe(true);
  });

  it('keeps the host in force when the new configuration does not load or the build throws', async () => {
    const first = fakeHost('first');
    const builds: Array<() => Promise<FakeHost | undefined>> = [async () => undefined, async () => Promise.reject(new Error('journal busy'))];
    const reloader = new HostReloader<FakeHost, string>(first, {
      build: () => builds.shift()!(),
      swap: async () => expect.unreachable('no swap'),
      whenIdle: async () => undefined,
      logger: createSilentLogger(),
    });
    reloader.reload();
    await settle();
    reloader.reload();
    await settle();
    expect(reloader.current).toBe(first);
    expect(first.closed).toBe(false);
  });

  it('coalesces reloads asked for while one runs into one more', async () => {
    let builds = 0;
    let finishBuild!: () => void;
    const reloader = new HostReloader<FakeHost, string>(fakeHost('h0'), {
      build: () => {
        builds++;
        return new Promise((resolve) => (finishBuild = () => resolve(fakeHost(`h${builds}`))));
      },
      swap: async () => undefined,
      whenIdle: async () => undefined,
      logger: createSilentLogger(),
    });
    reloader.reload();
    reloader.reload();
    reloader.reload();
    await settle();
    finishBuild();
    await settle();
    finishBuild();
    await settle();
    expect(builds).toBe(2);
    expect(reloader.current.supervisor).toBe('h2');
  });
});
