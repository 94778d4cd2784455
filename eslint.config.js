import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The simulator is an independent witness of the two API documents: it may not borrow the
 * exporter's schemas, catalogue or rules, or a mistake in them would be made twice and no
 * test could catch it. Generic helpers in src/lib are shared. The product, in turn, never
 * imports the test world (the simulator, the demo, test support), so `npm run build` and the
 * image hold the exporter only. `no-restricted-imports` matches the import text: every
 * relative import that climbs into the forbidden folder has the shape the regex names.
 */
const SIMULATOR_MESSAGE = 'simulator/ is written from the API documents alone: import only from simulator/ and src/lib.';
const PRODUCT_MESSAGE = 'The exporter does not ship or lean on the test world: do not import simulator/, scripts/, test/ or bench/ from src/.';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'helm/', 'grafana-dashboards/', '.tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
    },
  },
  {
    files: ['simulator/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: String.raw`^(\.\./)+src/(?!lib/)`, message: SIMULATOR_MESSAGE }] }] },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: String.raw`^(\.\./)+(simulator|scripts|test|bench)(/|$)`, message: PRODUCT_MESSAGE }] }] },
  },
  {
    // Unit tests of the client read bodies written by hand or by test/support, never the simulator's own.
    files: ['src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: String.raw`^(\.\./)+simulator(/|$)`, message: PRODUCT_MESSAGE }] }] },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
