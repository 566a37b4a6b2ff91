/**
 * The import graph's rules (docs/architecture.md, "Rules"), checked by `npm run deps` in CI:
 * no circle anywhere in src, routers or entities (type-only imports included), and the roles
 * point one way. A capability is any folder of src/ that is not one of the shared folders below,
 * so a new capability is covered the day its folder appears. ESLint's no-restricted-imports
 * (eslint.config.js) states the same rules next to the code.
 */
const SHARED = 'access|platform|trpc|http|console|migrations|cli'
/** A file inside a capability; `$1` is its folder. */
const CAPABILITY = `^src/(?!(?:${SHARED})/)([^/]+)/`
/** A file inside any capability other than its index.ts. */
const CAPABILITY_INSIDE = `^src/(?!(?:${SHARED})/)[^/]+/(?!index\\.ts$)`
const rule = (name, comment, from, to) => ({ name, comment, severity: 'error', from, to })

module.exports = {
  forbidden: [
    rule('no-circular', 'No import circles, type-only imports included, entities too.', {}, { circular: true }),
    rule(
      'capabilities-meet-at-their-index',
      "A capability imports another capability only through that capability's index.ts.",
      { path: CAPABILITY },
      { path: CAPABILITY_INSIDE, pathNot: '^src/$1/' },
    ),
    rule('capabilities-reach-inside-directly', 'Inside a capability, files import each other, never their own index.ts.', { path: CAPABILITY }, { path: '^src/$1/index\\.ts$' }),
    rule(
      'outside-code-meets-capabilities-at-their-index',
      'Routers, the tRPC layer, the HTTP host, the runtime and the CLI reach a capability only through its index.ts.',
      { path: `^(routers/|src/(?:trpc|http|cli)/|src/[^/]+\\.ts$)` },
      { path: CAPABILITY_INSIDE },
    ),
    rule('capabilities-know-no-transport', 'A capability never imports tRPC, the HTTP host or routers.', { path: CAPABILITY }, { path: '^(src/(trpc|http)/|routers/)' }),
    rule('kit-serves-every-capability', 'The shared resource kit (src/access) imports no capability, tRPC, HTTP host or router.', { path: '^src/access/' }, { path: `^(${CAPABILITY.slice(1)}|src/(trpc|http)/|routers/)` }),
    rule('platform-points-down', 'The platform imports no capability, kit, context, tRPC, HTTP host or router.', { path: '^src/platform/' }, { path: `^(${CAPABILITY.slice(1)}|src/(access|trpc|http)/|src/[^/]+\\.ts$|routers/)` }),
    rule('context-is-narrow', 'The service context names no capability (they add their ports to it), tRPC, HTTP host or router.', { path: '^src/context\\.ts$' }, { path: `^(${CAPABILITY.slice(1)}|src/(trpc|http)/|routers/)` }),
    rule('trpc-no-way-up', 'The tRPC layer never imports routers or the HTTP host.', { path: '^src/trpc/' }, { path: '^(src/http/|routers/)' }),
    rule('entities-only-orm', 'Entities import only MikroORM (and each other).', { path: '^entities/' }, { path: '^(src|routers)/' }),
    rule('routers-declare-only', 'Routers declare procedures and call a capability; no entities, queries or database of their own.', { path: '^routers/' }, { path: '^(entities/|src/platform/db\\.ts$)' }),
    rule('console-is-a-client', 'The web console reaches the service through the tRPC client: router types from routers/client.ts, no server code.', { path: '^src/console/' }, { path: '^(src/(?!console/)|entities/|routers/(?!client\\.ts$))' }),
    rule('nothing-imports-the-console', 'The console is built and served as files; no server code imports it.', { path: '^(src/(?!console/)|routers/|entities/)' }, { path: '^src/console/' }),
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/migrations/' },
  },
}
