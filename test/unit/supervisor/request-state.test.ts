import { describe, expect, it } from 'vitest';
import { RequestStateSigner } from '../../../src/supervisor/request-state.js';

const HASH = 'a'.repeat(64);

function signer(now = { t: 1_000_000 }) {
  return { now, signer: new RequestStateSigner({ ttlMs: 60_000, now: () => now.t }) };
}

describe('RequestStateSigner', () => {
  it('accepts its own state once, for the same tool and argument hash', () => {
    const { signer: s } = signer();
    const state = s.issue('write_file', HASH);
    expect(s.verify(state, 'write_file', HASH)).toEqual({ ok: true });
    expect(s.verify(state, 'write_file', HASH)).toEqual({ ok: false, reason: 'replayed' });
  });

  it('refuses a state bound to other arguments or another tool as altered', () => {
    const { signer: s } = signer();
    const state = s.issue('write_file', HASH);
    expect(s.verify(state, 'write_file', 'b'.repeat(64))).toEqual({ ok: false, reason: 'altered' });
    expect(s.verify(state, 'delete_path', HASH)).toEqual({ ok: false, reason: 'altered' });
    // A refused attempt does not spend the state.
    expect(s.verify(state, 'write_file', HASH)).toEqual({ ok: true });
  });

  it('refuses a state issued for another definition of the tool (definition_changed), without spending it', () => {
    const { signer: s } = signer();
    const pinned = 'd'.repeat(64);
    const state = s.issue('write_file', HASH, pinned);
    expect(s.verify(state, 'write_file', HASH, 'e'.repeat(64))).toEqual({ ok: false, reason: 'definition_changed' });
    expect(s.verify(state, 'write_file', HASH)).toEqual({ ok: false, reason: 'definition_changed' });
    expect(s.verify(state, 'write_file', HASH, pinned)).toEqual({ ok: true });
  });

  it('refuses an expired state', () => {
    const { signer: s, now } = signer();
    const state = s.issue('write_file', HASH);
    now.t += 60_000;
    expect(s.verify(state, 'write_file', HASH)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses forged states: garbage, a re-encoded payload, another host key', () => {
    const { signer: s } = signer();
    const state = s.issue('write_file', HASH);
    const [body, mac] = state.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    const extended = Buffer.from(JSON.stringify({ ...payload, e: Date.now() + 1e9 })).toString('base64url');
    const other = new RequestStateSigner({ ttlMs: 60_000 }).issue('write_file', HASH);
    for (const forged of ['', 'x', '.', 'abc.def', `${extended}.${mac}`, `${body}.${mac.slice(0, -2)}`, other, 42, null, `${body}.${mac}x`, 'a'.repeat(5000)]) {
      expect(s.verify(forged, 'write_file', HASH)).toEqual({ ok: false, reason: 'forged' });
    }
    expect(s.verify(state, 'write_file', HASH)).toEqual({ ok: true });
  });

  it('issues distinct states for the same call', () => {
    const { signer: s } = signer();
    const first = s.issue('t', HASH);
    const second = s.issue('t', HASH);
    expect(first).not.toBe(second);
    expect(s.verify(first, 't', HASH)).toEqual({ ok: true });
    expect(s.verify(second, 't', HASH)).toEqual({ ok: true });
  });
});
