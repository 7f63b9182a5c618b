// The manifest's output schema (SPEC section 5 step 9), the one check for a
// plain value and an upstream server's structuredContent alike: a value that
// does not match is `invalid_output`, naming the first failing path and keyword.
import { HostError } from '../../errors.js';
import type { Manifest } from '../../registry/manifest.js';
import { describeError } from '../schema-error.js';

/** Checks `value` against the manifest's output schema, when it declares one. */
export function checkOutputSchema(value: unknown, manifest: Manifest): void {
  const validate = manifest.validateOutput;
  if (!validate || !manifest.output) return;
  if (validate(value)) return;
  // Ajv reuses `errors` on the next call: read the first one now.
  const first = validate.errors?.[0];
  const details = first ? describeError(first, manifest.output) : { path: '', keyword: 'schema', expected: manifest.output };
  throw new HostError('invalid_output', `The result of ${manifest.name} does not match its output schema.`, { reason: 'output_schema', ...details });
}
