// Lint rules, including the layers of docs/architecture.md ("Rules"): which folder may import
// which. dependency-cruiser (.dependency-cruiser.cjs) checks the same graph for circles.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

/** An import pattern refused with the rule it breaks. */
const refuse = (group, message) => ({ group, message })
const ROUTERS = refuse(['**/routers/**', '../routers/*', '../../routers/*'], 'Only the HTTP host and tests import routers.')
const HTTP = refuse(['**/http/**'], 'Nothing below the HTTP host imports it.')
const TRPC = refuse(['**/trpc/**', '@trpc/*', 'trpc-to-openapi'], 'Only routers, the HTTP host and the tRPC layer know tRPC; services take src/context.ts.')
const FASTIFY = refuse(['fastify', '@fastify/*'], 'Only the HTTP host knows Fastify (the platform logger type aside).')
const SERVICES = refuse(['**/services/**'], 'Services sit above this layer.')
const ACCESS = refuse(['**/access/**'], 'Access rules sit above this layer.')
const SCHEMAS = refuse(['**/schemas/**'], 'Wire shapes sit above this layer.')
const ENGINES = refuse(['**/llm/**', '**/workflow-engine/**', '**/knowledge/**', '**/command-room/**'], 'Engines sit above this layer.')
const CONTEXT = refuse(['**/context.ts', '!**/trpc/context.ts'], 'The service context sits above this layer.')
const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] })

export default tseslint.config(
  // dist/ holds the emitted client declarations; the examples' dependencies and generated REST types are theirs.
  {
    ignores: [
      'node_modules/**',
      'data/**',
      'bench/results/**',
      'coverage/**',
      '.dependency-cruiser.cjs',
      'dist/**',
      'examples/*/node_modules/**',
      'examples/rest-client/src/openapi.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Functions stay short enough to read at once (migrations are generated SQL).
    files: ['src/**/*.ts'],
    ignores: ['src/migrations/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  { files: ['entities/**/*.ts'], rules: restrict(ROUTERS, refuse(['**/src/**', '@trpc/*', 'fastify'], 'Entities import only MikroORM.')) },
  { files: ['src/platform/**/*.ts'], rules: restrict(ROUTERS, HTTP, TRPC, SERVICES, ACCESS, SCHEMAS, ENGINES, CONTEXT) },
  { files: ['src/context.ts'], rules: restrict(ROUTERS, HTTP, TRPC, FASTIFY, SERVICES, ACCESS) },
  { files: ['src/schemas/**/*.ts'], rules: restrict(ROUTERS, HTTP, TRPC, FASTIFY, SERVICES, ACCESS, ENGINES, CONTEXT) },
  { files: ['src/access/**/*.ts'], rules: restrict(ROUTERS, HTTP, TRPC, FASTIFY, SERVICES, ENGINES) },
  { files: ['src/services/**/*.ts'], rules: restrict(ROUTERS, HTTP, TRPC, FASTIFY) },
  { files: ['src/llm/**/*.ts', 'src/workflow-engine/**/*.ts', 'src/knowledge/**/*.ts', 'src/command-room/**/*.ts'], rules: restrict(ROUTERS, HTTP, TRPC, FASTIFY, SERVICES, ACCESS, CONTEXT) },
  { files: ['src/trpc/**/*.ts'], rules: restrict(ROUTERS, HTTP) },
  {
    // The console is a browser app: it reaches the service through the tRPC client and the router's types only.
    files: ['src/console/**/*.ts', 'src/console/**/*.tsx'],
    rules: restrict(
      refuse(['**/routers/*', '!**/routers/client.ts'], 'The console imports the router types from routers/client.ts only.'),
      refuse(['**/services/**', '**/platform/**', '**/schemas/**', '**/access/**', '**/http/**', '**/entities/**', 'fastify', '@fastify/*', '@mikro-orm/*'], 'The console runs in a browser: no server code.'),
    ),
  },
  {
    files: ['routers/**/*.ts'],
    rules: restrict(
      refuse(['@mikro-orm/*', '**/entities/**'], 'Routers declare procedures and call a service; no queries of their own.'),
      refuse(['**/access/**', '**/llm/**', '**/workflow-engine/**', '**/knowledge/**', '**/command-room/**', '**/platform/db.ts'], 'Routers reach access rules and engines through a service.'),
    ),
  },
)
