// Lint rules, including the module boundaries of STYLE.md ("Which way dependencies point").
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

const noRouters = { group: ['**/routers/**', '../routers/*', '../../routers/*'], message: 'Only the HTTP host and tests import routers.' }

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'bench/results/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    files: ['entities/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [noRouters, { group: ['**/src/**', '@trpc/*', 'fastify'], message: 'Entities import only MikroORM.' }] }],
    },
  },
  {
    files: ['src/services/**/*.ts', 'src/access/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [noRouters, { group: ['@trpc/*', 'fastify', 'trpc-to-openapi', '**/http/**'], message: 'Services know nothing of tRPC or HTTP; throw src/errors.ts.' }] },
      ],
    },
  },
  {
    files: ['src/trpc/**/*.ts', 'src/schemas/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noRouters] }] },
  },
  {
    files: ['routers/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@mikro-orm/*', '**/entities/**'], message: 'Routers declare procedures and call a service; no queries of their own.' }] },
      ],
    },
  },
)
