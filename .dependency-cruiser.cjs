/**
 * The import graph's rules (docs/architecture.md, "Rules"), checked by `npm run lint` and CI:
 * no circle anywhere in src, routers or entities (type-only imports included; entities may
 * name each other for their relations), and the layers point one way. ESLint's
 * no-restricted-imports (eslint.config.js) says the same per folder, next to the code.
 */
const layer = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } })

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circles, type-only imports included; entities may name each other for their relations.',
      severity: 'error',
      from: { pathNot: '^entities/' },
      to: { circular: true },
    },
    layer('platform-points-down', 'Infrastructure imports no service, engine, schema, access rule, context, tRPC, HTTP or router.', '^src/platform/', '^(src/(services|access|schemas|trpc|http|llm|workflow-engine|knowledge|command-room|context\\.ts|app\\.ts)|routers/)'),
    layer('context-is-narrow', 'The service context knows no service, access rule, tRPC, HTTP or router.', '^src/context\\.ts$', '^(src/(services|access|trpc|http)|routers/)'),
    layer('schemas-know-shapes-only', 'Wire shapes import only zod, entities and the platform.', '^src/schemas/', '^(src/(services|access|trpc|http|llm|workflow-engine|knowledge|command-room|context\\.ts)|routers/)'),
    layer('access-below-services', 'Access rules are SQL over the service context.', '^src/access/', '^(src/(services|trpc|http|llm|workflow-engine|knowledge|command-room)|routers/)'),
    layer('services-know-no-transport', 'Services take the narrow context, never tRPC or HTTP.', '^src/services/', '^(src/(trpc|http)|routers/)'),
    layer('engines-get-ports', 'Engines reach services through interfaces handed to them.', '^src/(llm|workflow-engine|knowledge|command-room)/', '^(src/(services|access|trpc|http|context\\.ts)|routers/)'),
    layer('trpc-no-way-up', 'The tRPC layer never imports routers or the HTTP host.', '^src/trpc/', '^(src/http|routers/)'),
    layer('entities-only-orm', 'Entities import only MikroORM.', '^entities/', '^(src|routers)/'),
    layer('console-is-a-client', 'The web console reaches the service through the tRPC client: router types from routers/client.ts, no server code.', '^src/console/', '^(src/(?!console/)|entities/|routers/(?!client\\.ts$))'),
    layer('nothing-imports-the-console', 'The console is built and served as files; no server code imports it.', '^(src/(?!console/)|routers/|entities/)', '^src/console/'),
    layer('routers-declare-only', 'Routers call services; no queries, entities or engines of their own.', '^routers/', '^(entities/|src/(access|llm|workflow-engine|knowledge|command-room|platform/db\\.ts))'),
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/migrations/' },
  },
}
