// linkSignals: follows any source, carries its reason, and lets go of the
// sources on unlink (AbortSignal.any's composites with listeners never do).
import { describe, expect, it } from 'vitest';
import { linkSignals } from '../../../src/supervisor/link-signals.js';

describe('linkSignals', () => {
  it('aborts with the reason of whichever source aborts first', () => {
    const first = new AbortController();
    const second = new AbortController();
    const linked = linkSignals([first.signal, second.signal]);
    expect(linked.signal.aborted).toBe(false);
    second.abort('shutdown');
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('shutdown');
    first.abort('late');
    expect(linked.signal.reason).toBe('shutdown');
  });

  it('starts aborted when a source already is', () => {
    const done = new AbortController();
    done.abort('already');
    const linked = linkSignals([new AbortController().signal, done.signal]);
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('already');
  });

  it('no longer follows its sources once unlinked', () => {
    const source = new AbortController();
    const linked = linkSignals([source.signal]);
    let heard = 0;
    linked.signal.addEventListener('abort', () => (heard += 1));
    linked.unlink();
    source.abort();
    expect(linked.signal.aborted).toBe(false);
    expect(heard).toBe(0);
  });
});
