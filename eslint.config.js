import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The simulator is an independent witness of the two API documents: it may not borrow the
 * exporter's schemas, catalogue or rules, or a mistake in them would be made twice and no
 * test could catch it. Generic helpers in src/lib are shared. The client, in turn, may not
 * lean on the simulator. `no-restricted-imports` matches the import text, not the resolved
 * path, so each folder depth gets the pattern that climbs exactly to src/ (and, for the
 * simulator, any that climbs past it). Upstream tests may use test/support.
 */
const SIMULATOR_MESSAGE = 'src/simulator is written from the API documents alone: import only from src/simulator and src/lib.';
const UPSTREAM_MESSAGE = 'The client must decode what the real service sends, not lean on the simulator: do not import src/simulator.';
const MAX_DEPTH = 5;

function forbidImports(folder, forbidden, message, { mayLeaveSrc }) {
  return Array.from({ length: MAX_DEPTH }, (_, level) => {
    const depth = level + 1;
    const up = String.raw`(\.\./)`;
    return {
      files: [`src/${folder}/${'*/'.repeat(level)}*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              { regex: `^${up}{${depth}}(${forbidden.join('|')})(\\.js)?(/|$)`, message },
              ...(mayLeaveSrc ? [] : [{ regex: `^${up}{${depth + 1},}`, message: `${message} (this import leaves src/)` }]),
            ],
          },
        ],
      },
    };
  });
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'helm/', 'grafana-dashboards/'] },
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
  ...forbidImports('simulator', ['upstream', 'sources', 'exposition', 'scheduler', 'budget', 'config', 'server', 'exporter'], SIMULATOR_MESSAGE, { mayLeaveSrc: false }),
  ...forbidImports('upstream', ['simulator'], UPSTREAM_MESSAGE, { mayLeaveSrc: true }),
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
