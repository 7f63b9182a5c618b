// Result checks on a runner's JSON output: a value the runner already parsed
// (a persistent process's line is parsed whole) passes the same strict checks
// on its exact text, with the same code and details, as text alone would.
import { describe, expect, it } from 'vitest';
import { HostError } from '../../../../src/errors.js';
import type { Manifest } from '../../../../src/registry/manifest.js';
import { MAX_RESULT_DEPTH } from '../../../../src/supervisor/result/strict-json.js';
import { parseResult } from '../../../../src/supervisor/result/parse.js';

const manifest = { name: 't' } as unknown as Manifest;

function refusal(run: () => unknown): Record<string, unknown> {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(HostError);
    return { code: (error as HostError).code, ...(error as HostError).details };
  }
  throw new Error('expected a refusal');
}

describe('parseResult', () => {
  it('uses the value parsed with the text once the text passed', () => {
    const parsed = { text: 'hello' };
    const checked = parseResult({ type: 'json', json: '{"text":"hello"}', parsed }, manifest);
    expect(checked).toEqual({ type: 'json', value: parsed });
    expect(checked.type === 'json' && checked.value).toBe(parsed);
  });

  it.each([
    ['a duplicate key', '{"k":1,"k":2}'],
    ['a duplicate key spelled with an escape', '[{"a":1,"\\u0061":2}]'],
    ['one level too deep', '['.repeat(MAX_RESULT_DEPTH + 1) + ']'.repeat(MAX_RESULT_DEPTH + 1)],
    ['100,000 levels', '['.repeat(100_000) + ']'.repeat(100_000)],
  ])('refuses %s with the same invalid_output details, parsed or not', (_, json) => {
    const parsed = JSON.parse(json) as unknown;
    const withValue = refusal(() => parseResult({ type: 'json', json, parsed }, manifest));
    expect(withValue['code']).toBe('invalid_output');
    expect(withValue).toEqual(refusal(() => parseResult({ type: 'json', json }, manifest)));
  });
});
