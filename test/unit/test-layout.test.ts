// Where test code lives: test files under unit/, integration/ and e2e/, the code
// they share in helpers/ only (so a helper is found, and written, once), vitest's
// setup in setup/. Fixtures are data and programs the tests run, not shared code.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const TEST_DIR = fileURLToPath(new URL('..', import.meta.url));

function typeScriptFiles(): string[] {
  return readdirSync(TEST_DIR, { recursive: true, encoding: 'utf8' }).filter(
    (name) => name.endsWith('.ts') && !name.split('/').some((part) => part === 'fixtures' || part === 'node_modules'),
  );
}

describe('the test folder', () => {
  it('keeps shared test code in test/helpers/ only', () => {
    const misplaced = typeScriptFiles().filter((name) => !name.endsWith('.test.ts') && !name.startsWith('helpers/') && !name.startsWith('setup/'));
    expect(misplaced).toEqual([]);
  });

  it('holds test files only under unit/, integration/ and e2e/', () => {
    const misplaced = typeScriptFiles().filter((name) => name.endsWith('.test.ts') && !/^(unit|integration|e2e)\//.test(name));
    expect(misplaced).toEqual([]);
  });
});
