// Argument validation (SPEC section 5 step 4) against the input schema the
// registry compiled once at load (without allErrors: arguments are untrusted,
// the first failure is enough). The error names the failing path, the keyword
// and the expected sub-schema, so a model can repair the call.
import { HostError } from '../../errors.js';
import type { Manifest } from '../../registry/manifest.js';
import { escapeForPrompt } from '../prompt-text.js';
import { describeError } from '../schema-error.js';

type ToolArgs = Readonly<Record<string, unknown>>;

/** The arguments as an object (absent means `{}`), or `invalid_arguments`. */
export function validateArgs(manifest: Manifest, args: unknown): ToolArgs {
  const value = args ?? {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HostError('invalid_arguments', `The arguments of ${manifest.name} must be a JSON object.`, {
      path: '',
      keyword: 'type',
      expected: { type: 'object' },
    });
  }
  const validate = manifest.validateInput;
  if (validate(value)) return value as ToolArgs;
  // Ajv reuses `errors` on the next call: copy what we need now, before any await.
  const first = validate.errors?.[0];
  const details = first ? describeError(first, manifest.input) : { path: '', keyword: 'schema', expected: manifest.input };
  const where = details.path === '' ? 'the arguments' : `argument ${escapeForPrompt(details.path, 120)}`;
  const what =
    details.keyword === 'required'
      ? ' is required'
      : details.keyword === 'additionalProperties'
        ? ' is not allowed'
        : first?.message
          ? ` ${first.message}`
          : ' does not match the input schema';
  throw new HostError('invalid_arguments', `In ${manifest.name}, ${where}${what}.`, details);
}
