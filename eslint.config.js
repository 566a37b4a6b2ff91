// Lint rules, including the layers of docs/architecture.md ("Rules"): which folder may import
// which. dependency-cruiser (.dependency-cruiser.cjs) checks the same graph for circles.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

/** An import pattern refused with the rule it breaks. */
const refuse = (group, message) => ({ group, message })
/** An import specifier refused by regular expression, with the rule it breaks. */
const refuseRegex = (regex, message) => ({ regex, message })
const ROUTERS = refuse(['**/routers/**', '../routers/*', '../../routers/*'], 'Only the HTTP host and tests import routers.')
const HTTP = refuse(['**/http/**'], 'Nothing below the HTTP host imports it.')
const TRPC = refuse(['**/trpc/**', '@trpc/*', 'trpc-to-openapi'], 'Only routers, the HTTP host and the tRPC layer know tRPC; capabilities take src/context.ts.')
const FASTIFY = refuse(['fastify', '@fastify/*'], 'Only the HTTP host knows Fastify (the platform logger type aside).')
const CONSOLE = refuse(['**/console/**'], 'The console is built and served as files; no server code imports it.')
const CONTEXT = refuse(['**/context.ts', '!**/trpc/context.ts'], 'The service context sits above this layer.')
/** The folders of src/ every capability shares; every other folder of src/ is a capability. */
const SHARED = 'access|platform|trpc|http|console|migrations|cli'
const OTHER_CAPABILITY_INSIDE = refuseRegex(
  `^(\\.\\./)+(?!(?:${SHARED}|entities)/)[^./][^/]*/(?!index\\.ts$)`,
  "A capability imports another capability only through that capability's index.ts.",
)
const OWN_INDEX = refuseRegex('^\\.\\.?/index\\.ts$', 'Inside a capability, files import each other, never their own index.ts.')
const ANY_CAPABILITY = refuseRegex(`^\\.\\./(?!(?:${SHARED})/)[^./][^/]*/`, 'The shared kit and the platform serve every capability and import none.')
const KIT = refuse(['**/access/**'], 'The shared resource kit sits above the platform.')
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
  { files: ['src/platform/**/*.ts'], rules: restrict(ROUTERS, HTTP, TRPC, CONSOLE, KIT, ANY_CAPABILITY, CONTEXT) },
  {
    files: ['src/context.ts'],
    rules: restrict(ROUTERS, HTTP, TRPC, FASTIFY, CONSOLE, refuseRegex(`^\\./(?!(?:platform|access)/)[^/]+/`, 'The service context names no capability: capabilities add their ports to it.')),
  },
  { files: ['src/access/**/*.ts'], rules: restrict(ROUTERS, HTTP, TRPC, FASTIFY, CONSOLE, ANY_CAPABILITY) },
  {
    // Every folder of src/ that is not shared is a capability (docs/architecture.md, "Layout").
    files: ['src/*/**/*.ts'],
    ignores: ['src/{access,platform,trpc,http,console,migrations,cli}/**'],
    rules: restrict(ROUTERS, HTTP, TRPC, FASTIFY, CONSOLE, OTHER_CAPABILITY_INSIDE, OWN_INDEX),
  },
  { files: ['src/trpc/**/*.ts'], rules: restrict(ROUTERS, HTTP, CONSOLE, OTHER_CAPABILITY_INSIDE) },
  { files: ['src/http/**/*.ts', 'src/cli/**/*.ts'], rules: restrict(CONSOLE, OTHER_CAPABILITY_INSIDE) },
  {
    files: ['src/*.ts'],
    ignores: ['src/context.ts'],
    rules: restrict(ROUTERS, CONSOLE, refuseRegex(`^\\./(?!(?:${SHARED})/)[^/]+/(?!index\\.ts$)`, 'The runtime reaches a capability only through its index.ts.')),
  },
  {
    // The console is a browser app: it reaches the service through the tRPC client and the router's types only.
    files: ['src/console/**/*.ts', 'src/console/**/*.tsx'],
    rules: restrict(
      refuse(['**/routers/*', '!**/routers/client.ts'], 'The console imports the router types from routers/client.ts only.'),
      // The capabilities' folders are named like the console's screens: dependency-cruiser's
      // console-is-a-client rule refuses any path out of src/console but routers/client.ts.
      refuse(['**/platform/**', '**/access/**', '**/http/**', '**/trpc/**', '**/entities/**', 'fastify', '@fastify/*', '@mikro-orm/*'], 'The console runs in a browser: no server code.'),
    ),
  },
  {
    files: ['routers/**/*.ts'],
    rules: restrict(
      refuse(['@mikro-orm/*', '**/entities/**', '**/platform/db.ts'], 'Routers declare procedures and call a capability; no queries of their own.'),
      refuseRegex(`^\\.\\./src/(?!(?:${SHARED})/)[^/]+/(?!index\\.ts$)`, "Routers reach a capability only through its index.ts."),
    ),
  },
)
