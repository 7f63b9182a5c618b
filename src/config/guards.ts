// The narrowing of values that arrive as `unknown` (parsed JSON and YAML,
// messages, SDK payloads), for every folder of src/. isRecord is the far side's
// own (sandbox/shared/ is the contract both sides load at run time), so the host
// and the sandbox agree on what an object is.
import { isRecord } from '../../sandbox/shared/readers.mjs';

/** Whether the value is an object (not null, not an array), to read its keys. */
export { isRecord };

/** The value when it is an object (not null, not an array), else an empty one: for reading optional parts of a schema. */
export function asRecord(value: unknown): Readonly<Record<string, unknown>> {
  return isRecord(value) ? value : {};
}
