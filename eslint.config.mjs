import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'coverage/**', '.parley/**', 'jest.config.js', 'tools/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
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
