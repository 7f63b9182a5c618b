// Lint: the rules the type checker cannot give.
// A promise nobody awaits or handles can reject into an unhandled rejection and
// end the host; a promise passed where a plain callback is expected is dropped
// the same way. Both need type information, so the TypeScript of src/ and test/
// is linted against one program (tsconfig.test.json holds both). The plain ESM
// of sandbox/ and scripts/ gets ESLint's recommended rules without type
// information: tsc -p tsconfig.sandbox.json already type-checks sandbox/.
import { builtinRules } from 'eslint/use-at-your-own-risk';
import tseslint from 'typescript-eslint';

// The rules ESLint marks recommended (what @eslint/js's `recommended` holds).
// no-undef is left to tsc: it knows Node's globals, this list would not.
const recommendedJsRules = Object.fromEntries([...builtinRules].filter(([name, rule]) => rule.meta?.docs?.recommended && name !== 'no-undef').map(([name]) => [name, 'error']));

// Files past about 400 lines want splitting by concern (STYLE §4): a warning, not a failure.
const maxLines = ['warn', { max: 400 }];

export default tseslint.config(
  {
    // Fixtures are tool code written to misbehave; the conformance runner is a package of its own.
    ignores: ['dist/**', 'node_modules/**', '**/fixtures/**', 'test/conformance-runner/**', 'src/registry/generated/**'],
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'vitest.config.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    // Directives in src/ may name rules that a later entry of this list turns on.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // `import type` for types (STYLE §4): a type-only import leaves no import in the built JavaScript.
      // An inline `import('…').T` stays allowed: it names a type without loading the module.
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'separate-type-imports', disallowTypeAnnotations: false }],
      // An import, a variable or a catch binding nothing reads is left from a change; a handler keeps its signature.
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none', caughtErrors: 'none', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'max-lines': maxLines,
    },
  },
  {
    files: ['sandbox/**/*.mjs', 'scripts/**/*.mjs', 'src/**/*.mjs', 'test/**/*.mjs', '*.js'],
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module' },
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      ...recommendedJsRules,
      // A handler keeps the signature it is called with, used or not.
      'no-unused-vars': ['error', { args: 'none' }],
      'max-lines': maxLines,
    },
  },
  {
    // The binary is CommonJS (bin/package.json): it starts without Node's ES module loader.
    files: ['bin/*.js'],
    languageOptions: { ecmaVersion: 'latest', sourceType: 'commonjs' },
    rules: { ...recommendedJsRules, 'no-unused-vars': ['error', { args: 'none' }] },
  },
);
