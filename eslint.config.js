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
  { ignores: ['**/node_modules/**', '**/dist/**', 'cli/bin/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js'] },
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
    ['session', 'knowledge', 'search', 'cron', 'hooks'],
    ['agent', 'tools', 'platforms'],
  ]),
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
);
