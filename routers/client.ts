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
export type { RunEventRecord } from '../src/runs/index.ts'
export type { ErrorIssue } from '../src/trpc/root-types.ts'

/** The input of every procedure, by router and procedure: `RouterInputs['agents']['create']`. */
export type RouterInputs = inferRouterInputs<AppRouter>

/** The output of every procedure, by router and procedure: `RouterOutputs['agents']['list']`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>
