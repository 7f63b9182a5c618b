// The one test of a JSON-RPC request id the host's raw readers share: what the SDKs' schema takes.
import { describe, expect, it } from 'vitest';
import { isRequestId } from '../../../src/protocol/request-id.js';

describe('isRequestId', () => {
  it('takes a string or a safe integer, as the MCP SDKs do', () => {
    for (const id of ['', 'a', '1', 0, 1, -7, Number.MAX_SAFE_INTEGER]) expect(isRequestId(id)).toBe(true);
  });

  it('refuses a fraction, an integer beyond 2^53, and anything not a string or number', () => {
    for (const id of [1.5, 2 ** 53, Number.NaN, Infinity, null, undefined, true, {}, [1]]) expect(isRequestId(id)).toBe(false);
  });
});
