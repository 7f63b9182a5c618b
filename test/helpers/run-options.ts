// The options of one runner call in tests, as the supervisor builds them: a
// CallControl (the real one) linked to `signal`, its deadline armed at
// `timeoutMs`. One options object per call: a control is spent once it stops.
import type { RunOptions } from '../../src/runner/run-types.js';
import { CallControl } from '../../src/supervisor/call-control.js';

export interface RunOptionsInput extends Partial<Omit<RunOptions, 'control'>> {
  /** The request's signal: aborting it cancels the call. */
  readonly signal?: AbortSignal;
  /** The call's deadline; default 20 s. */
  readonly timeoutMs?: number;
}

export function runOptions({ signal = new AbortController().signal, timeoutMs = 20_000, ...rest }: RunOptionsInput = {}): RunOptions & { readonly control: CallControl } {
  return { control: new CallControl([signal], { timeoutMs }), ...rest };
}
