// The boundary's question "would the MCP SDK dispatch this message?" against
// the SDK itself: the refusals name the member the SDK's schema refuses, and
// the shortcut that spares plain lines the SDK's guard never says yes where
// the guard says no (over a corpus of combinations, and against the shapes of
// the SDK's schemas, so an SDK that starts parsing more fails here).
import { isJSONRPCNotification, isJSONRPCRequest, RELATED_TASK_META_KEY, specTypeSchemas } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { isSurelyDispatched, sdkDispatches, sdkRefusal } from '../../../src/protocol/sdk-dispatch.js';

const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' } };
const request = (params?: unknown, extra: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', ...(params !== undefined ? { params } : {}), ...extra });
const notification = (params?: unknown, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  ...(params !== undefined ? { params } : {}),
  ...extra,
});

describe('sdkRefusal', () => {
  it.each([
    ['a fractional progress token', request({ name: 'echo', _meta: { progressToken: 1.5 } }), '/params/_meta/progressToken'],
    ['a boolean progress token', request({ name: 'echo', _meta: { progressToken: true } }), '/params/_meta/progressToken'],
    ['an object progress token', request({ name: 'echo', _meta: { progressToken: {} } }), '/params/_meta/progressToken'],
    ['a progress token past the safe integers', request({ name: 'echo', _meta: { progressToken: 2 ** 60 } }), '/params/_meta/progressToken'],
    ['_meta null', request({ name: 'echo', _meta: null }), '/params/_meta'],
    ['_meta an array', request({ name: 'echo', _meta: [] }), '/params/_meta'],
    ['_meta a string', request({ name: 'echo', _meta: 'x' }), '/params/_meta'],
    ['an extra top-level member', request({ name: 'echo' }, { extra: 1 }), '/extra'],
    ['a result beside the method', request({ name: 'echo' }, { result: {} }), '/result'],
    [
      'a related-task without a string taskId',
      request({ name: 'echo', _meta: { [RELATED_TASK_META_KEY]: { taskId: 5 } } }),
      '/params/_meta/io.modelcontextprotocol~1related-task/taskId',
    ],
  ])('a request with %s is refused, naming the member', (_name, message, key) => {
    expect(isJSONRPCRequest(message)).toBe(false);
    expect(sdkRefusal(message, 'request')).toBe(key);
  });

  it.each([
    ['a fractional progress token', notification({ requestId: 1, _meta: { progressToken: 0.5 } }), '/params/_meta/progressToken'],
    ['_meta null', notification({ _meta: null }), '/params/_meta'],
    ['an extra top-level member', notification({}, { extra: true }), '/extra'],
  ])('a notification with %s is refused', (_name, message, key) => {
    expect(sdkRefusal(message, 'notification')).toBe(key);
  });

  it.each([
    ['a result that is not an object', { jsonrpc: '2.0', id: 1, result: 5 }, '/result'],
    ['an error without a message', { jsonrpc: '2.0', id: 1, error: { code: 1 } }, '/error/message'],
    ['an error with a fractional code', { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'm' } }, '/error/code'],
    ['an extra member', { jsonrpc: '2.0', id: 1, result: {}, extra: 1 }, '/extra'],
  ])('a response with %s is refused', (_name, message, key) => {
    expect(sdkRefusal(message, 'response')).toBe(key);
  });

  it.each([
    ['a plain call', request({ name: 'echo', arguments: { a: 1 } }), 'request'],
    ['a string progress token', request({ name: 'echo', _meta: { progressToken: 'p' } }), 'request'],
    ['an integer progress token', request({ name: 'echo', _meta: { progressToken: -7 } }), 'request'],
    ['the modern envelope', request({ name: 'echo', _meta: ENVELOPE }), 'request'],
    ['a related-task with a string taskId', request({ name: 'echo', _meta: { [RELATED_TASK_META_KEY]: { taskId: 't', more: 1 } } }), 'request'],
    ['params members the SDK does not parse here', request({ name: 7, task: { ttl: 'x' }, extra: null }), 'request'],
    ['no params', request(), 'request'],
    ['an empty method', { jsonrpc: '2.0', id: 'x', method: '' }, 'request'],
    ['a cancel', notification({ requestId: 1, reason: 'r' }), 'notification'],
    ['a result', { jsonrpc: '2.0', id: 1, result: { action: 'accept' } }, 'response'],
    ['an error', { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no', data: [1] } }, 'response'],
  ] as const)('%s is dispatched', (_name, message, kind) => {
    expect(sdkRefusal(message, kind)).toBeUndefined();
  });
});

describe('the shortcut that spares plain lines the SDK guard', () => {
  // Every combination of top-level members, params and _meta the boundary lets through.
  const metas: unknown[] = [
    undefined,
    {},
    ENVELOPE,
    { progressToken: 'p' },
    { progressToken: 1 },
    { progressToken: 1.5 },
    { progressToken: -0 },
    { progressToken: Number.MIN_SAFE_INTEGER },
    { progressToken: Number.MAX_SAFE_INTEGER + 1 },
    { progressToken: true },
    { progressToken: {} },
    { progressToken: [] },
    { progressToken: null },
    { ...ENVELOPE, progressToken: 'p' },
    { [RELATED_TASK_META_KEY]: { taskId: 't' } },
    { [RELATED_TASK_META_KEY]: {} },
    { [RELATED_TASK_META_KEY]: null },
    null,
    [],
    'meta',
    0,
    { other: { progressToken: 1.5 } },
  ];
  const paramsOf = (meta: unknown): unknown[] => [undefined, {}, { name: 'echo', arguments: {} }, ...(meta === undefined ? [] : [{ name: 'echo', _meta: meta }])];
  const extras: Array<Record<string, unknown>> = [{}, { extra: 1 }, { result: {} }, { error: { code: 1, message: 'm' } }];
  const corpus: Array<Record<string, unknown>> = [];
  for (const meta of metas) {
    for (const params of paramsOf(meta)) {
      for (const extra of extras) {
        corpus.push(request(params, extra));
        corpus.push(notification(params, extra));
      }
    }
  }

  it('says yes only where the SDK guard says yes, and to the plain lines', () => {
    let shortcuts = 0;
    for (const message of corpus) {
      const kind = 'id' in message ? 'request' : 'notification';
      const sdk = kind === 'request' ? isJSONRPCRequest(message) : isJSONRPCNotification(message);
      if (isSurelyDispatched(message)) {
        shortcuts++;
        expect(sdk, JSON.stringify(message)).toBe(true);
      }
      expect(sdkRefusal(message, kind) === undefined, JSON.stringify(message)).toBe(sdk);
      expect(sdkDispatches(message, kind)).toBe(sdk);
    }
    // The common lines take it: a plain call, one with a progress token, one with the modern envelope, no params.
    expect(isSurelyDispatched(request({ name: 'echo', arguments: {} }))).toBe(true);
    expect(isSurelyDispatched(request({ name: 'echo', _meta: { progressToken: 'p' } }))).toBe(true);
    expect(isSurelyDispatched(request({ name: 'echo', _meta: { progressToken: 7 } }))).toBe(true);
    expect(isSurelyDispatched(request({ name: 'echo', _meta: ENVELOPE }))).toBe(true);
    expect(isSurelyDispatched(notification())).toBe(true);
    expect(shortcuts).toBeGreaterThan(10);
  });

  it('covers exactly the members the SDK schemas parse (an SDK that parses more must be looked at again)', () => {
    type Shape = { shape: Record<string, { unwrap(): { shape: Record<string, { unwrap(): { shape: Record<string, unknown> } }> } }> };
    const shapes = (schema: unknown) => {
      const top = (schema as Shape).shape;
      const params = top['params']!.unwrap().shape;
      return { top: Object.keys(top).sort(), params: Object.keys(params).sort(), meta: Object.keys(params['_meta']!.unwrap().shape).sort() };
    };
    expect(shapes(specTypeSchemas.JSONRPCRequest)).toEqual({
      top: ['id', 'jsonrpc', 'method', 'params'],
      params: ['_meta'],
      meta: [RELATED_TASK_META_KEY, 'progressToken'].sort(),
    });
    expect(shapes(specTypeSchemas.JSONRPCNotification)).toEqual({ top: ['jsonrpc', 'method', 'params'], params: ['_meta'], meta: [RELATED_TASK_META_KEY, 'progressToken'].sort() });
  });
});
