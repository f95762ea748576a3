import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'cli/bin/**'] },
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
  {
    // A lib never imports a service; services talk through queues and Postgres.
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@herald/ingress', '@herald/worker', '@herald/scheduler', '@herald/reviewer', '@herald/cli'], message: 'a lib never imports a service' }] },
      ],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'libraries take config, not process.env' }],
    },
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
);
