// ESLint (typescript-eslint's recommended rules) over the sources, tests, benchmarks and scripts; `npm test` runs it.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // test/fixtures/ holds API folders: tenants' code, some of it hostile on purpose.
  { ignores: ['dist/', 'coverage/', 'bench/.peers/', 'console/vendor/', '**/node_modules/', 'test/fixtures/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  { languageOptions: { globals: { ...globals.node } } },
  // The console's pages and the code that runs inside isolates are not Node.
  { files: ['console/**/*.js'], languageOptions: { globals: { ...globals.browser } } },
  // Tests read JSON answers and log lines of any shape.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  // `_name` is a value taken on purpose and not used (a destructured field left out, a callback's argument).
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
);
