// Lint with type information over src/: the rules the type checker cannot give.
// A promise nobody awaits or handles can reject into an unhandled rejection and
// end the host; a promise passed where a plain callback is expected is dropped
// the same way. Further rules are added to this list.
import tseslint from 'typescript-eslint';

export default tseslint.config({
  files: ['src/**/*.ts'],
  languageOptions: {
    parser: tseslint.parser,
    parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
  },
  plugins: { '@typescript-eslint': tseslint.plugin },
  // Directives in src/ may name rules that a later entry of this list turns on.
  linterOptions: { reportUnusedDisableDirectives: 'off' },
  rules: {
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': 'error',
  },
});
