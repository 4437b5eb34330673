import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The dashboard's own lint: browser code, Preact's JSX, no Node globals. */
export default tseslint.config({ ignores: ['dist/**'] }, js.configs.recommended, ...tseslint.configs.recommended, {
  files: ['**/*.{ts,tsx}'],
  languageOptions: { parserOptions: { ecmaFeatures: { jsx: true } } },
  rules: {
    '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    'no-restricted-globals': ['error', 'localStorage', 'process'],
  },
});
