import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const SERVICES = ['@herald/ingress', '@herald/worker', '@herald/scheduler', '@herald/reviewer', '@herald/cli'];

function layerRules(layers) {
  return layers.flatMap((layer, depth) => {
    const later = layers.slice(depth + 1).flat();
    return layer.map((lib) => ({
      files: [`libs/${lib}/src/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              { group: SERVICES, message: 'a lib never imports a service' },
              ...[...later, ...layer.filter((peer) => peer !== lib)].map((other) => ({
                group: [`@herald/${other}`],
                message: `@herald/${lib} sits below or beside @herald/${other}: dependencies point one way`,
              })),
            ],
          },
        ],
        'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'libraries take config, not process.env' }],
      },
    }));
  });
}

export default tseslint.config(
  // A hostile MCP server the tests start as a plain Node program: a fixture, not project code.
  { ignores: ['**/node_modules/**', '**/dist/**', 'cli/bin/**', 'test/fixtures/**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js', 'bench/turns/count-statements.mjs', 'scripts/bundle.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // Dependencies point one way, down this list (docs/architecture.md): a lib may import only the
  // libs of earlier layers, never a peer of its own layer, never a service.
  ...layerRules([
    ['telemetry'],
    ['core', 'queue'],
    ['db'],
    ['delivery', 'jobs', 'audit'],
    ['session', 'leases', 'transcript', 'waits', 'limits', 'knowledge', 'search', 'hooks', 'profiles'],
    ['handoff', 'lineage', 'subagents'],
    ['inbox'],
    // A cron run is a turn: it starts through the inbox and reports through the outbox.
    ['cron'],
    ['agent', 'tools', 'platforms'],
    ['mcp'],
  ]),
  // Size rules (docs/decisions/2026-12-02-size-rules.md). A file counts every line, as `wc -l`
  // does; a function counts only its code, so a comment saying why never pushes it over.
  {
    files: ['**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // A test file is a list of cases and a describe block a tree of them, not a function to split;
    // bench and scripts are one-shot procedures run by hand, read top to bottom.
    files: ['test/**/*.ts', '**/test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 600 }], 'max-lines-per-function': 'off' },
  },
  {
    // Written by kysely-codegen from the migrated database (npm run db:types): one interface per
    // table, its length is the schema's, not a module to split.
    files: ['libs/db/src/generated/**/*.ts'],
    rules: { 'max-lines': 'off' },
  },

  {
    // Tests read JSON bodies of any shape and assert on them.
    files: ['test/**/*.ts', '**/test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['libs/core/src/config.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['services/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@herald/ingress', '@herald/worker', '@herald/scheduler', '@herald/reviewer'], message: 'services talk through queues and Postgres, never by import' }] },
      ],
    },
  },
  {
    // Issue 30, point 2: services and the CLI query through the owning lib's functions, so they do not
    // build SQL. Types (a Transaction passed through) are fine. Wiring files that build a client are
    // the exception (below: the Hermes import's one connection offered as a Kysely transaction).
    files: ['services/*/src/**/*.ts', 'cli/src/**/*.ts'],
    ignores: ['cli/src/hermes-import/single-client.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [{ name: 'kysely', message: "query through the table owner's lib (test/table-owners.test.ts)", allowTypeImports: true }] }],
    },
  },
);
