import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import { stayInside } from './tools/eslint/stay-inside.mjs';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'libs/client/dist/**',
      'coverage/**',
      '.parley/**',
      'jest.config.js',
      'tools/*.js',
      // The dashboard has its own lint: ui/eslint.config.mjs (npm run lint runs both).
      'ui/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX, parley: { rules: { 'stay-inside': stayInside } } },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      // The @parley/* paths of tsconfig.json, so the cycle check follows imports across libraries.
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: `${import.meta.dirname}/tsconfig.json` })],
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      'parley/stay-inside': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Only libs/config reads process.env; inject the typed Config instead.',
        },
      ],
    },
  },
  {
    // Type-only imports are erased and form no cycle; packages are not followed. Tests are left
    // out: nothing imports a test file, so none can close a cycle.
    files: ['**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.e2e-spec.ts', '**/*.kurrent-spec.ts'],
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // The domain is pure: deciding loads no framework, driver or other library of Parley.
    files: ['libs/domain/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.fixtures.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@parley/core$|\\.)',
              message: 'libs/domain imports only @parley/core and its own files: it stays pure.',
            },
          ],
        },
      ],
    },
  },
  {
    // The turn loop stays a sequence of short steps: the decider decides, the worker performs.
    files: ['libs/turn/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.fixtures.ts', '**/*.test-kit.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }] },
  },
  {
    // The config lib owns the environment; test/bench/tool entry points read their own knobs.
    files: [
      'libs/config/**',
      'libs/testing/**',
      'test/**',
      'bench/**',
      'tools/**',
      '**/*.spec.ts',
      '**/*.e2e-spec.ts',
      '**/*.kurrent-spec.ts',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Tests read JSON bodies of many shapes; asserting on `any` there is clearer than casting.
    files: ['test/**', '**/*.spec.ts', '**/*.e2e-spec.ts', '**/*.kurrent-spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
