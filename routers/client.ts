/**
 * What a TypeScript front end imports, as `agent-workspace-service/client` (docs/api/clients.md):
 * the router's type and the input and output types of every procedure, through declarations
 * that `npm run client:types` emits to dist/types (tsconfig.client.json). Types only: a front end
 * bundles none of the server.
 *
 * The declarations name the tRPC context, meta and error issues through src/trpc/root-types.ts,
 * which imports nothing, so a front end's compiler loads this file, routers/index.d.ts, those
 * types and @trpc/server's, not the server's ORM, driver or zod types.
 */
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server'
import type { AppRouter } from './index.ts'

export type { AppRouter }
export type { ErrorIssue } from '../src/trpc/root-types.ts'

/** The input of every procedure, by router and procedure: `RouterInputs['agents']['create']`. */
export type RouterInputs = inferRouterInputs<AppRouter>

/** The output of every procedure, by router and procedure: `RouterOutputs['agents']['list']`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>

/**
 * One event of the `runs.events` subscription exactly as a client receives it (the tracked
 * envelope's `data`): `seq`, `type`, `created_at`, and `data`, which tRPC's JSON serialisation
 * types as optional (a value that may be undefined may be left out). Derived from the procedure,
 * so a client that hands a subscription's event to a function taking this type compiles under
 * `strict`; test/client-types.test.ts holds its shape.
 */
export type RunEventRecord = RouterOutputs['runs']['events'] extends AsyncIterable<{ data: infer Event }> ? Event : never
