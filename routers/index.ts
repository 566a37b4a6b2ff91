/**
 * The application router: every procedure of the service. `AppRouter` is the type a TypeScript
 * front end imports for end-to-end types (API.md section 1).
 */
import { createCallerFactory, router } from '../src/trpc/init.ts'
import { authRouter } from './auth.router.ts'
import { systemRouter } from './system.router.ts'
import { accessTokensRouter, userRouter } from './user.router.ts'
import { workspacesRouter } from './workspaces.router.ts'

export const appRouter = router({
  system: systemRouter,
  auth: authRouter,
  user: userRouter,
  accessTokens: accessTokensRouter,
  workspaces: workspacesRouter,
})

export type AppRouter = typeof appRouter

/** `createCaller(ctx)` for tests and in-process callers. */
export const createCaller = createCallerFactory(appRouter)
