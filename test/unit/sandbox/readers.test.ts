// The receiving side's readers (sandbox/shared/readers.mjs): each message a
// side sends is read as its type, and a shape the contract does not allow is a
// protocol violation with a reason, never a half-read message.
import { describe, expect, it } from 'vitest';
import {
  readDenial,
  readHostToIsolateMessage,
  readIsolateMessage,
  readLaneAnswer,
  readLogLevel,
  readProgress,
  readWorkerAbort,
  readWorkerEvent,
  readWorkerTasks,
} from '../../../sandbox/shared/readers.mjs';

const INIT = {
  type: 'init',
  toolName: 't',
  ivmPath: '/ivm.js',
  entryPath: '/tool.mjs',
  preludePath: '/prelude.mjs',
  memoryMb: 64,
  floodCapBytes: 1024,
  maxIsolates: 4,
  roots: [{ path: '/work', access: 'read' }],
  protectedPaths: [],
  hiddenPaths: ['/work/.git'],
  egress: { proxyUrl: 'http://10.0.0.1:3128', allow: ['example.com'] },
};

describe('readIsolateMessage (the host reading the isolate process)', () => {
  it.each([
    [{ type: 'loaded' }],
    [{ type: 'ready' }],
    [{ type: 'start_failed', reason: 'no entry' }],
    [{ type: 'stopped', id: 1 }],
    [{ type: 'result', id: 1, kind: 'envelope', envelope: { ok: true } }],
    [{ type: 'result', id: 1, kind: 'envelope', envelope: { ok: true }, times: { slotUs: 1, runUs: 2, encodeUs: 0, inboundUs: 3, sentAtUs: 4 } }],
    [{ type: 'result', id: 1, kind: 'load_error', message: 'SyntaxError' }],
    [{ type: 'result', id: 1, kind: 'ivm_error', stage: 'run', message: 'x', isolateDisposed: false, hostDisposeReason: 'wedged' }],
    [{ type: 'progress', id: 2, progress: 1, total: 2, message: 'half' }],
    [{ type: 'log', id: 2, level: 'warn', message: 'm' }],
    [{ type: 'denied', id: 2, op: 'fs.readText', target: '/etc/shadow', reason: 'outside_roots' }],
    [{ type: 'egress', id: 2, host: 'example.com', port: null, method: 'GET', reason: 'host_not_allowed' }],
  ])('reads %j as itself', (message) => {
    expect(readIsolateMessage(message)).toBe(message);
  });

  it.each([
    [null, 'a message that is not an object'],
    [[1], 'a message that is not an object'],
    [{ type: 'shout' }, 'a message for a call that was never started'],
    [{ type: 'shout', id: 1 }, 'an unknown message type'],
    [{ id: 1 }, 'an unknown message type'],
    [{ type: 'log', id: 0, level: 'info', message: 'm' }, 'a message for a call that was never started'],
    [{ type: 'log', id: 1.5, level: 'info', message: 'm' }, 'a message for a call that was never started'],
    [{ type: 'log', id: 1, level: 'info', message: 7 }, 'a log message of the wrong shape'],
    [{ type: 'progress', id: 1, progress: '1' }, 'a progress message of the wrong shape'],
    [{ type: 'denied', id: 1, op: 'fs.readText', target: '/x' }, 'a denial of the wrong shape'],
    [{ type: 'egress', id: 1, host: 'h', port: '443', method: null, reason: 'r' }, 'an egress refusal of the wrong shape'],
    [{ type: 'result', id: 1, kind: 'envelope', envelope: 'ok' }, 'a result without its envelope'],
    [
      { type: 'result', id: 1, kind: 'envelope', envelope: { ok: true }, times: { slotUs: 1, runUs: -2, encodeUs: 0, inboundUs: 3, sentAtUs: 4 } },
      'stage times of the wrong shape',
    ],
    [{ type: 'result', id: 1, kind: 'envelope', envelope: { ok: true }, times: { slotUs: 1 } }, 'stage times of the wrong shape'],
    [{ type: 'result', id: 1, kind: 'ivm_error', stage: 'later', message: 'x', isolateDisposed: false }, 'an isolated-vm failure of the wrong shape'],
    [{ type: 'result', id: 1, kind: 'other' }, 'a result of an unknown kind'],
    [{ type: 'start_failed' }, 'a start failure without a reason'],
    [{ type: 'catastrophe', message: 'oom' }, 'a message for a call that was never started'],
    [{ type: 'catastrophe', message: 'oom', id: 3 }, 'an unknown message type'],
  ])('refuses %j: %s', (message, reason) => {
    expect(readIsolateMessage(message)).toEqual({ type: 'violation', reason });
  });
});

describe('readHostToIsolateMessage (the isolate process reading the host)', () => {
  it('reads init, run and stop as themselves', () => {
    const run = { type: 'run', id: 1, callId: 'c', args: {}, timeoutMs: 1000, egressToken: 'tok' };
    const timed = { ...run, sentAtUs: 12 };
    for (const message of [INIT, { ...INIT, stageTimes: true }, run, timed, { type: 'stop', id: 1 }]) expect(readHostToIsolateMessage(message)).toBe(message);
  });

  it.each([
    [{ ...INIT, memoryMb: '64' }, 'an init message of the wrong shape'],
    [{ ...INIT, roots: [{ path: '/w', access: 'all' }] }, 'an init message of the wrong shape'],
    [{ ...INIT, egress: { proxyUrl: 'x' } }, 'an init message of the wrong shape'],
    [{ ...INIT, stageTimes: 'yes' }, 'an init message of the wrong shape'],
    [{ type: 'run', id: 1, callId: 'c', args: [], timeoutMs: 1 }, 'a run message of the wrong shape'],
    [{ type: 'run', id: 1, callId: 'c', args: {}, timeoutMs: 1, sentAtUs: '1' }, 'a run message of the wrong shape'],
    [{ type: 'stop' }, 'a message for a call that was never started'],
    [{ type: 'ping' }, 'an unknown message type'],
    ['init', 'a message that is not an object'],
  ])('refuses %j: %s', (message, reason) => {
    expect(readHostToIsolateMessage(message)).toEqual({ type: 'violation', reason });
  });
});

describe('worker readers', () => {
  it('reads a pool channel event for a call, and nothing else on that channel', () => {
    const log = { callId: 'c', type: 'log', level: 'info', message: 'm' };
    expect(readWorkerEvent(log)).toBe(log);
    expect(readWorkerEvent({ type: 'abort', callId: 'c' })).toBeUndefined();
    expect(readWorkerEvent({ type: 'log' })).toBeUndefined();
    expect(readWorkerAbort({ type: 'abort', callId: 'c' })).toEqual({ type: 'abort', callId: 'c' });
    expect(readWorkerAbort(log)).toBeUndefined();
  });

  it('reads lane answers and tasks, and names what is not one', () => {
    expect(readLaneAnswer({ slot: 1, ticket: 2, answer: { ok: true } })).toEqual({ slot: 1, ticket: 2, answer: { ok: true } });
    expect(readLaneAnswer({ slot: 1, ticket: 2, failed: true })).toEqual({ slot: 1, ticket: 2, failed: true });
    expect(readLaneAnswer({ slot: 1, ticket: 2, failed: 'yes' })).toEqual({ type: 'violation', reason: 'an answer of the wrong shape' });
    expect(readLaneAnswer({ ticket: 2 })).toEqual({ type: 'violation', reason: 'a message for a call that was never started' });
    const tasks = [{ callId: 'c', args: {}, slot: 0, ticket: 1 }];
    expect(readWorkerTasks(tasks)).toBe(tasks);
    expect(readWorkerTasks({ callId: 'c' })).toEqual({ type: 'violation', reason: 'tasks that are not a list' });
    expect(readWorkerTasks([{ callId: 'c', slot: '0', ticket: 1 }])).toEqual({ type: 'violation', reason: 'a task of the wrong shape' });
  });
});

describe('event readers', () => {
  it('read progress, levels and denials, leaving out what is not of their shape', () => {
    expect(readProgress({ progress: 1, total: Number.NaN, message: 3 })).toEqual({ progress: 1 });
    expect(readProgress({ progress: Number.POSITIVE_INFINITY })).toBeUndefined();
    expect(readLogLevel('error')).toBe('error');
    expect(readLogLevel('trace')).toBe('info');
    expect(readDenial({ op: 'fs.list', target: 7, reason: 'outside_roots' })).toEqual({ op: 'fs.list', target: '', reason: 'outside_roots' });
    expect(readDenial(undefined)).toBeUndefined();
  });
});
