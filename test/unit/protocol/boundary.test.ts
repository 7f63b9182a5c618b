import { describe, expect, it } from 'vitest';
import { checkLine, DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_DEPTH, recoverIdFromPrefix } from '../../../src/protocol/boundary.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const nest = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
/** A tools/call whose whole message nests `depth` levels (the message is level 1, params 2, arguments 3 and on). */
const callWithDepth = (id: number, depth: number): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":${nest(depth - 2)}}}`;

describe('checkLine: accepted messages', () => {
  it.each([
    ['a request', '{"jsonrpc":"2.0","id":1,"method":"ping"}'],
    ['a string id', '{"jsonrpc":"2.0","id":"a-1","method":"tools/list","params":{}}'],
    ['a notification', '{"jsonrpc":"2.0","method":"notifications/initialized"}'],
    ['a response', '{"jsonrpc":"2.0","id":0,"result":{"action":"accept"}}'],
    ['an error response', '{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}'],
    ['absent arguments', '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}'],
    ['escapes and numbers', '{"jsonrpc":"2.0","id":4,"method":"ping","params":{"s":"a\\"b\\\\","u":"\\u00e9","n":[-0.5e10,0,1E+2]}}'],
    ['whitespace', ' { "jsonrpc" : "2.0" , "id" : 5 , "method" : "ping" } '],
    ['exactly the depth limit', callWithDepth(6, MAX_MESSAGE_DEPTH)],
    ['a string progress token', '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"p"}}}'],
    [
      'the modern envelope in _meta',
      '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":-3}}}',
    ],
  ])('%s', (_name, line) => {
    const check = checkLine(utf8(line), DEFAULT_MAX_MESSAGE_BYTES);
    expect(check).toEqual({ ok: true, message: JSON.parse(line) });
  });
});

describe('checkLine: refused lines answer with the id when it can be recovered', () => {
  const bad = Buffer.from([0xc3, 0x28]);
  it.each([
    ['not JSON, id scanned', utf8('{"jsonrpc":"2.0","id":7,"method":"ping"'), -32700, 7, 'invalid_json'],
    ['not JSON, nothing to scan', utf8('hello'), -32700, null, 'invalid_json'],
    ['a nested id is not the request id', utf8('{"params":{"id":99},"id":8,"jsonrpc":"2.0","method":"ping"'), -32700, 8, 'invalid_json'],
    ['a leading zero', utf8('{"jsonrpc":"2.0","id":10,"method":"ping","params":{"n":01}}'), -32700, 10, 'invalid_json'],
    ['a raw control character in a string', utf8('{"jsonrpc":"2.0","id":11,"method":"ping","params":{"s":"a\tb"}}'), -32700, 11, 'invalid_json'],
    ['duplicate top-level keys', utf8('{"jsonrpc":"2.0","id":"d","method":"ping","method":"x"}'), -32600, 'd', 'duplicate_key'],
    ['duplicate keys spelled with an escape', utf8('{"jsonrpc":"2.0","id":12,"method":"ping","params":{"a":1,"\\u0061":2}}'), -32600, 12, 'duplicate_key'],
    ['too deep', utf8(callWithDepth(13, MAX_MESSAGE_DEPTH + 1)), -32600, 13, 'too_deep'],
    ['far too deep', utf8(`{"jsonrpc":"2.0","id":14,"method":"ping","params":{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`), -32600, 14, 'too_deep'],
    ['invalid UTF-8 in valid JSON', Buffer.concat([utf8('{"jsonrpc":"2.0","id":15,"method":"ping","params":{"x":"'), bad, utf8('"}}')]), -32600, 15, 'invalid_utf8'],
    ['invalid UTF-8 and not JSON', Buffer.concat([utf8('{"jsonrpc":"2.0","id":16,"x":"'), bad]), -32700, 16, 'invalid_utf8'],
    ['arguments an array', utf8('{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"x","arguments":[1]}}'), -32600, 17, 'arguments_not_object'],
    ['arguments null', utf8('{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"x","arguments":null}}'), -32600, 18, 'arguments_not_object'],
    ['a batch', utf8('[{"jsonrpc":"2.0","id":19,"method":"ping"}]'), -32600, null, 'batch_not_supported'],
    ['wrong jsonrpc version', utf8('{"jsonrpc":"1.0","id":20,"method":"ping"}'), -32600, 20, 'not_jsonrpc'],
    ['params an array', utf8('{"jsonrpc":"2.0","id":21,"method":"ping","params":[1]}'), -32600, 21, 'not_jsonrpc'],
    ['a null id', utf8('{"jsonrpc":"2.0","id":null,"method":"ping"}'), -32600, null, 'not_jsonrpc'],
    ['a scalar', utf8('42'), -32600, null, 'not_jsonrpc'],
    [
      'a __proto__ key in the arguments',
      utf8('{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"x","arguments":{"text":"a","__proto__":{"n":"notint"}}}}'),
      -32600,
      22,
      'proto_key',
    ],
    [
      'a __proto__ key spelled with an escape',
      utf8('{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"x","arguments":{"\\u005f_proto__":{}}}}'),
      -32600,
      23,
      'proto_key',
    ],
    ['a nested __proto__ key', utf8('{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"x","arguments":{"a":[{"__proto__":null}]}}}'), -32600, 24, 'proto_key'],
    // JSON-RPC the SDK's message schemas refuse: it would drop them unanswered.
    ['a fractional progress token', utf8('{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1.5}}}'), -32600, 25, 'not_mcp_message'],
    ['a boolean progress token', utf8('{"jsonrpc":"2.0","id":"26","method":"tools/call","params":{"name":"x","_meta":{"progressToken":true}}}'), -32600, '26', 'not_mcp_message'],
    ['_meta null', utf8('{"jsonrpc":"2.0","id":27,"method":"ping","params":{"_meta":null}}'), -32600, 27, 'not_mcp_message'],
    ['an extra top-level member', utf8('{"jsonrpc":"2.0","id":28,"method":"tools/list","extra":{}}'), -32600, 28, 'not_mcp_message'],
    ['a response the SDK refuses (no error message)', utf8('{"jsonrpc":"2.0","id":29,"error":{"code":-1}}'), -32600, null, 'not_mcp_message'],
  ])('%s', (_name, bytes, code, id, reason) => {
    const check = checkLine(bytes, DEFAULT_MAX_MESSAGE_BYTES);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.response.id).toEqual(id);
    expect(check.response.error.code).toBe(code);
    expect(check.response.error.data).toMatchObject({ code: 'malformed_request', reason });
  });

  it('names the __proto__ key as a path', () => {
    const check = checkLine(utf8('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"p":{"__proto__":{"n":1}}}}}'), 1024);
    expect(check.ok ? undefined : check.response.error.data).toEqual({ code: 'malformed_request', reason: 'proto_key', key: '/params/arguments/p/__proto__', recovery: 'stop' });
  });

  it('names the member the SDK would refuse as a path; a request is answered, a notification is marked for no answer', () => {
    const call = checkLine(utf8('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":{}}}}'), 1024);
    expect(call).toEqual({
      ok: false,
      response: {
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32600, message: 'Invalid Request', data: { code: 'malformed_request', reason: 'not_mcp_message', key: '/params/_meta/progressToken', recovery: 'stop' } },
      },
    });
    const cancel = checkLine(utf8('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1},"extra":2}'), 1024);
    expect(cancel).toEqual({
      ok: false,
      response: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request', data: { code: 'malformed_request', reason: 'not_mcp_message', key: '/extra', recovery: 'stop' } },
      },
      notification: { method: 'notifications/cancelled' },
    });
  });

  it('names the duplicated key as a path', () => {
    const check = checkLine(utf8('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"p":{"q":1,"q":2}}}}'), 1024);
    expect(check.ok ? undefined : check.response.error.data).toEqual({ code: 'malformed_request', reason: 'duplicate_key', key: '/params/arguments/p/q', recovery: 'stop' });
  });

  it('refuses a line above the byte cap with the id from its first bytes', () => {
    const line = `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"x","arguments":{"s":"${'a'.repeat(2000)}"}}}`;
    const check = checkLine(utf8(line), 1000);
    expect(check.ok ? undefined : check.response).toEqual({
      jsonrpc: '2.0',
      id: 'big',
      error: { code: -32600, message: 'Invalid Request', data: { code: 'malformed_request', reason: 'too_large', maxBytes: 1000, recovery: 'stop' } },
    });
  });
});

describe('recoverIdFromPrefix', () => {
  it.each([
    ['{"id":"x\\"y","method', 'x"y'],
    ['{"method":"a{","id":5', 5],
    ['{"id":1.5}', null],
    ['{"id":true, "x":', null],
    ['no object', null],
  ])('%s', (text, id) => {
    expect(recoverIdFromPrefix(text)).toEqual(id);
  });
});

describe('duplicate key paths', () => {
  it.each([
    ['{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}', '/method'],
    ['{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[{"k":1,"k":2}]}}', '/params/a/-/k'],
    ['{"jsonrpc":"2.0","id":1,"method":"m","params":{"a/b":{"~":1,"~":2}}}', '/params/a~1b/~0'],
  ])('%s → %s', (line, key) => {
    const check = checkLine(utf8(line), 1024);
    expect(check.ok ? undefined : check.response.error.data['key']).toBe(key);
  });
});

// One scanner serves every line (no per-line allocation): nothing a line leaves behind may change the next one's answer.
describe('the scanner shared by every line', () => {
  const manyKeys = (count: number, repeat: string): string =>
    `{"jsonrpc":"2.0","id":1,"method":"m","params":{${Array.from({ length: count }, (_, i) => `"k${i}":${i}`).join(',')},"${repeat}":0}}`;

  it('finds a duplicate among many keys (past the short list, in the set)', () => {
    const check = checkLine(utf8(manyKeys(40, 'k3')), 4096);
    expect(check.ok ? undefined : check.response.error.data).toEqual({ code: 'malformed_request', reason: 'duplicate_key', key: '/params/k3', recovery: 'stop' });
    expect(checkLine(utf8(manyKeys(40, 'k40')), 4096).ok).toBe(true);
  });

  it('does not carry keys, ids or depth from one line into the next', () => {
    const hostile = `{"jsonrpc":"2.0","id":"deep","method":"m","params":{"a":1,"x":${'['.repeat(5000)}${']'.repeat(5000)}}}`;
    expect(checkLine(utf8(hostile), DEFAULT_MAX_MESSAGE_BYTES).ok).toBe(false);
    const sameKeys = '{"jsonrpc":"2.0","id":2,"method":"m","params":{"a":1,"x":[]}}';
    expect(checkLine(utf8(sameKeys), 1024)).toEqual({ ok: true, message: JSON.parse(sameKeys) });
    const duplicate = checkLine(utf8('{"jsonrpc":"2.0","id":3,"method":"m","params":{"b":{"a":1},"a":1,"a":2}}'), 1024);
    expect(duplicate.ok ? undefined : { id: duplicate.response.id, ...duplicate.response.error.data }).toEqual({
      id: 3,
      code: 'malformed_request',
      reason: 'duplicate_key',
      key: '/params/a',
      recovery: 'stop',
    });
    const noId = checkLine(utf8('{"jsonrpc":"2.0","method":"m","params":{"id":9},"x":1,"x":2}'), 1024);
    expect(noId.ok ? undefined : noId.response.id).toBeNull();
  });

  it('checks escapes in one pass: an escaped quote, a bad escape, a short \\u', () => {
    const escapedQuote = '{"jsonrpc":"2.0","id":4,"method":"m","params":{"s\\"k":"a\\"b\\\\","t":"\\u00E9"}}';
    expect(checkLine(utf8(escapedQuote), 1024)).toEqual({ ok: true, message: JSON.parse(escapedQuote) });
    for (const line of ['{"jsonrpc":"2.0","id":5,"method":"m","params":{"s":"\\q"}}', '{"jsonrpc":"2.0","id":5,"method":"m","params":{"s":"\\u12"}}']) {
      const check = checkLine(utf8(line), 1024);
      expect(check.ok ? undefined : [check.response.id, check.response.error.data.reason]).toEqual([5, 'invalid_json']);
    }
  });
});
