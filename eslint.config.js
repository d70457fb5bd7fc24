// Lint rules that catch real bugs in this code base: promises nobody awaits or that reach a place
// expecting a plain value, awaiting what is not a promise, switches that miss a case. Type-aware:
// the rules read tsconfig.json's program. Style is the formatter's (prettier), not the linter's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.gex/**', 'src/generated/**'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/prefer-promise-reject-errors': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-constant-condition': ['error', { checkLoops: false }],
      // a handler that reads a variable assigned once the server it belongs to exists
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Control characters in patterns are deliberate here: header values, names, terminal escapes.
      'no-control-regex': 'off',
    },
  },
  {
    // Test helpers parse arbitrary JSON answers and walk them: one `any` alias beats casts at each step.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
