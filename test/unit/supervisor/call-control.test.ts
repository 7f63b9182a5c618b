// CallControl: the one termination control of a call. It follows the request's
// signal and the host's shutdown, arms the deadline, keeps the first reason,
// tells what registered to stop exactly once, and lets go of everything on
// dispose (no listener left on a long-lived signal). Its AbortSignal is made
// only when asked for (already aborted after a stop). Timers are faked.
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallControl, clampDelayMs, concludeCall } from '../../../src/supervisor/call-control.js';
import { countAbortControllers } from '../../helpers/abort-count.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('CallControl', () => {
  it('stops as cancelled when any source aborts, and tells each registered stop once', () => {
    const request = new AbortController();
    const shutdown = new AbortController();
    const control = new CallControl([request.signal, shutdown.signal]);
    const heard: string[] = [];
    control.onStop((reason) => heard.push(`a:${reason}`));
    control.onStop((reason) => heard.push(`b:${reason}`));
    expect(control.reason).toBeUndefined();
    shutdown.abort();
    request.abort();
    expect(control.reason).toBe('cancelled');
    expect(control.signal.aborted).toBe(true);
    expect(heard).toEqual(['a:cancelled', 'b:cancelled']);
    expect(control.failure()).toEqual({ code: 'cancelled', message: 'The call was cancelled.', details: {} });
  });

  it('starts stopped when a source already aborted, and tells a late registration at once', () => {
    const done = new AbortController();
    done.abort();
    const control = new CallControl([new AbortController().signal, done.signal]);
    const onStop = vi.fn();
    control.onStop(onStop);
    expect(onStop).toHaveBeenCalledWith('cancelled');
  });

  it('stops with timeout at the deadline, carrying timeoutMs', async () => {
    const control = new CallControl([new AbortController().signal], { timeoutMs: 300 });
    const stopped = control.stopped;
    vi.advanceTimersByTime(299);
    expect(control.reason).toBeUndefined();
    vi.advanceTimersByTime(1);
    await expect(stopped).resolves.toBe('timeout');
    expect(control.failure()).toEqual({ code: 'timeout', message: 'The tool ran past its time limit.', details: { timeoutMs: 300 } });
  });

  it('keeps the first reason when a deadline, a cancel and a runner race', () => {
    const request = new AbortController();
    const control = new CallControl([request.signal], { timeoutMs: 100 });
    expect(control.stop('output_limit')).toBe('output_limit');
    request.abort();
    vi.advanceTimersByTime(1000);
    expect(control.stop('tool_error')).toBe('output_limit');
    expect(control.reason).toBe('output_limit');
  });

  it('a disarmed deadline does not fire; an unregistered stop is not told', () => {
    const control = new CallControl([]);
    const disarm = control.startDeadline(50);
    const onStop = vi.fn();
    control.onStop(onStop)();
    disarm();
    vi.advanceTimersByTime(1000);
    expect(control.reason).toBeUndefined();
    control.stop('cancelled');
    expect(onStop).not.toHaveBeenCalled();
  });

  it('lets go of its sources and timers on dispose', () => {
    const request = new AbortController();
    const control = new CallControl([request.signal], { timeoutMs: 50 });
    expect(getEventListeners(request.signal, 'abort')).toHaveLength(1);
    control.dispose();
    expect(getEventListeners(request.signal, 'abort')).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
    request.abort();
    expect(control.reason).toBeUndefined();
  });

  it('follow links one more source (the host shutdown, added by the supervisor); dispose lets go of it too', () => {
    const shutdown = new AbortController();
    const control = new CallControl([new AbortController().signal]);
    control.follow(shutdown.signal);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    control.dispose();
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    const live = new CallControl([]);
    live.follow(shutdown.signal);
    shutdown.abort('host closing');
    expect(live.reason).toBe('cancelled');
    expect(live.signal.reason).toBe('host closing');
  });

  it('abort stops the call as a source would, with the given reason on its signal', () => {
    const control = new CallControl([new AbortController().signal]);
    const why = { details: { reason: 'shutdown' } };
    expect(control.abort(why)).toBe('cancelled');
    expect(control.signal.reason).toBe(why);
    expect(control.stop('timeout')).toBe('cancelled');
  });

  it('afterStop resolves the grace after the stop (the supervisor backstop)', async () => {
    const control = new CallControl([]);
    const backstop = vi.fn();
    void control.afterStop(5000).then(backstop);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(backstop).not.toHaveBeenCalled();
    control.stop('timeout');
    await vi.advanceTimersByTimeAsync(4999);
    expect(backstop).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(backstop).toHaveBeenCalled();
  });

  it('onStopAfter runs the grace after the stop, not before it, and not once cancelled', async () => {
    const control = new CallControl([]);
    const backstop = vi.fn();
    control.onStopAfter(5000, backstop);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(backstop).not.toHaveBeenCalled();
    control.stop('cancelled');
    await vi.advanceTimersByTimeAsync(4999);
    expect(backstop).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(backstop).toHaveBeenCalledTimes(1);

    // Cancelled before the stop (the run is over): the stop arms nothing.
    const before = new CallControl([]);
    const never = vi.fn();
    before.onStopAfter(5000, never)();
    before.stop('timeout');
    // Cancelled after the stop, during the grace: the armed timer goes too.
    const during = new CallControl([]);
    const late = vi.fn();
    const cancel = during.onStopAfter(5000, late);
    during.stop('timeout');
    cancel();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(never).not.toHaveBeenCalled();
    expect(late).not.toHaveBeenCalled();
  });
});

describe('CallControl makes its AbortSignal only when asked for one', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('a call nobody stops, whose signal nobody reads, makes none', () => {
    const made = countAbortControllers();
    const control = new CallControl();
    const disarm = control.startDeadline(30_000);
    const stopWatch = control.onStopAfter(5_000, () => {});
    control.onStop(() => {})();
    expect(control.aborted).toBe(false);
    expect(control.reason).toBeUndefined();
    control.settle('tool_error');
    disarm();
    stopWatch();
    control.dispose();
    expect(made()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a stop tells everything registered without making one; one asked for later is aborted already, with the first reason', () => {
    const made = countAbortControllers();
    const control = new CallControl([], { timeoutMs: 100 });
    const heard: string[] = [];
    control.onStop((reason) => heard.push(reason));
    const why = { details: { reason: 'shutdown' } };
    expect(control.abort(why)).toBe('cancelled');
    vi.advanceTimersByTime(1000);
    expect(control.stop('timeout')).toBe('cancelled');
    expect(heard).toEqual(['cancelled']);
    expect(control.aborted).toBe(true);
    expect(made()).toBe(0);
    const signal = control.signal;
    expect(made()).toBe(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(why);
    expect(control.signal).toBe(signal);
  });

  it("a signal made after a deadline stop carries the stop's own reason; one made before aborts at the stop", () => {
    const late = new CallControl([], { timeoutMs: 50 });
    vi.advanceTimersByTime(50);
    expect(late.signal.aborted).toBe(true);
    expect(late.signal.reason).toBe('timeout');
    expect(late.failure()).toEqual({ code: 'timeout', message: 'The tool ran past its time limit.', details: { timeoutMs: 50 } });

    const early = new CallControl([], { timeoutMs: 50 });
    const signal = early.signal;
    const onAbort = vi.fn();
    signal.addEventListener('abort', onAbort);
    expect(signal.aborted).toBe(false);
    vi.advanceTimersByTime(50);
    expect(onAbort).toHaveBeenCalledTimes(1);
    expect(signal.reason).toBe('timeout');
  });

  it("a source's abort before the signal is asked for: the signal carries the source's reason", () => {
    const request = new AbortController();
    const control = new CallControl([request.signal]);
    request.abort('user stop');
    expect(control.aborted).toBe(true);
    expect(control.signal.reason).toBe('user stop');
    expect(getEventListeners(request.signal, 'abort')).toHaveLength(0);
  });
});

describe('clampDelayMs', () => {
  it.each([
    [250, 250],
    [-5, 0],
    [Number.POSITIVE_INFINITY, 2 ** 31 - 1],
    [2 ** 40, 2 ** 31 - 1],
    [Number.NaN, 2 ** 31 - 1],
  ])('%d → %d', (input, expected) => {
    expect(clampDelayMs(input)).toBe(expected);
  });
});

describe('CallControl.settle', () => {
  it('records the first reason without stopping; a later cancel still aborts the signal', () => {
    const request = new AbortController();
    const control = new CallControl([request.signal]);
    const onStop = vi.fn();
    control.onStop(onStop);
    expect(control.settle('tool_error')).toBe('tool_error');
    expect(control.signal.aborted).toBe(false);
    expect(onStop).not.toHaveBeenCalled();
    request.abort();
    expect(control.signal.aborted).toBe(true);
    expect(control.reason).toBe('tool_error');
    expect(onStop).toHaveBeenCalledWith('tool_error');
  });
});

describe('concludeCall', () => {
  it('a failure stands as the first reason, the same object', () => {
    const control = new CallControl();
    const failure = { code: 'tool_error' as const, message: 'The tool failed.', details: { exitCode: 2 } };
    expect(concludeCall(control, failure)).toBe(failure);
    expect(control.reason).toBe('tool_error');
  });

  it("a reason recorded first wins: the call ends with the control's code, sentence and facts", () => {
    const control = new CallControl([], { timeoutMs: 40 });
    vi.advanceTimersByTime(40);
    const late = { code: 'tool_crashed' as const, message: 'The tool crashed.', details: { signal: 'SIGKILL' } };
    expect(concludeCall(control, late)).toEqual({ code: 'timeout', message: 'The tool ran past its time limit.', details: { timeoutMs: 40 } });
    expect(control.reason).toBe('timeout');
  });

  it("a runner's own timer seeing the deadline first (isolated-vm's) ends with the call's sentence and timeoutMs, its other facts kept", () => {
    const control = new CallControl([], { timeoutMs: 300 });
    const own = { code: 'timeout' as const, message: 'Script execution timed out.', details: { timeoutMs: 120, stderrTail: 'slow' } };
    expect(concludeCall(control, own)).toEqual({ code: 'timeout', message: 'The tool ran past its time limit.', details: { timeoutMs: 300, stderrTail: 'slow' } });
    const already = { code: 'timeout' as const, message: 'The tool ran past its time limit.', details: { timeoutMs: 300, durationMs: 301 } };
    expect(concludeCall(control, already)).toBe(already);
  });
});

describe('CallControl.pauseDeadline (a sandbox start never counts against timeoutMs)', () => {
  it('holds the deadline while a start runs and resumes it with the time that was left', () => {
    const control = new CallControl();
    control.startDeadline(1_000);
    vi.advanceTimersByTime(300);
    const resume = control.pauseDeadline();
    vi.advanceTimersByTime(5_000);
    expect(control.reason).toBeUndefined();
    resume();
    resume();
    vi.advanceTimersByTime(699);
    expect(control.reason).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(control.reason).toBe('timeout');
  });

  it('nests: the deadline runs again only when the last start is over', () => {
    const control = new CallControl();
    control.startDeadline(100);
    const first = control.pauseDeadline();
    const second = control.pauseDeadline();
    first();
    vi.advanceTimersByTime(1_000);
    expect(control.reason).toBeUndefined();
    second();
    vi.advanceTimersByTime(100);
    expect(control.reason).toBe('timeout');
  });

  it('a cancel during the pause still stops the call; a disarmed deadline is not re-armed', () => {
    const request = new AbortController();
    const control = new CallControl([request.signal]);
    const disarm = control.startDeadline(100);
    const resume = control.pauseDeadline();
    request.abort();
    expect(control.reason).toBe('cancelled');
    resume();
    const other = new CallControl();
    const disarmOther = other.startDeadline(100);
    const resumeOther = other.pauseDeadline();
    disarmOther();
    resumeOther();
    vi.advanceTimersByTime(1_000);
    expect(other.reason).toBeUndefined();
    disarm();
  });
});
