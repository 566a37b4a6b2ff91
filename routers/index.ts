/**
 * The application router: every procedure of the service. `AppRouter` is the type a TypeScript
 * front end imports for end-to-end types (docs/api/conventions.md).
 */
import { createCallerFactory, router } from '../src/trpc/init.ts'
import { agentsRouter } from './agents.router.ts'
import { authRouter } from './auth.router.ts'
import { categoriesRouter } from './categories.router.ts'
import { datasetsRouter } from './datasets.router.ts'
import { promptsRouter } from './prompts.router.ts'
import { systemRouter } from './system.router.ts'
import { accessTokensRouter, userRouter } from './user.router.ts'
import { workspacesRouter } from './workspaces.router.ts'
import { workflowsRouter } from './workflows.router.ts'
import { workflowNodeTypesRouter } from './workflow-node-types.router.ts'
import { workflowExecutionsRouter } from './workflow-executions.router.ts'
import { accountsRouter } from './accounts.router.ts'
import { providersRouter } from './providers.router.ts'
import { toolsRouter } from './tools.router.ts'
import { metricsRouter } from './metrics.router.ts'
import { largeLanguageModelsRouter } from './models.router.ts'
import { threadsRouter } from './threads.router.ts'
import { messagesRouter } from './messages.router.ts'
import { memoriesRouter } from './memories.router.ts'
import { runsRouter } from './runs.router.ts'
import { approvalsRouter } from './approvals.router.ts'
import { knowledgeRouter } from './knowledge.router.ts'
import { commandRoomRouter } from './command-room.router.ts'
import { budgetsRouter, usageRouter } from './usage.router.ts'
import { webhooksRouter } from './webhooks.router.ts'
import { auditRouter } from './audit.router.ts'
import { ssoRouter } from './sso.router.ts'
import { oauthRouter } from './oauth.router.ts'
import { evaluationsRouter } from './evaluations.router.ts'

export const appRouter = router({
  system: systemRouter,
  auth: authRouter,
  sso: ssoRouter,
  oauth: oauthRouter,
  user: userRouter,
  accessTokens: accessTokensRouter,
  workspaces: workspacesRouter,
  workflows: workflowsRouter,
  workflowNodeTypes: workflowNodeTypesRouter,
  workflowExecutions: workflowExecutionsRouter,
  categories: categoriesRouter,
  prompts: promptsRouter,
  agents: agentsRouter,
  providers: providersRouter,
  accounts: accountsRouter,
  tools: toolsRouter,
  metrics: metricsRouter,
  largeLanguageModels: largeLanguageModelsRouter,
  threads: threadsRouter,
  messages: messagesRouter,
  memories: memoriesRouter,
  runs: runsRouter,
  approvals: approvalsRouter,
  knowledge: knowledgeRouter,
  commandRoom: commandRoomRouter,
  usage: usageRouter,
  budgets: budgetsRouter,
  webhooks: webhooksRouter,
  auditEvents: auditRouter,
  datasets: datasetsRouter,
  evaluations: evaluationsRouter,
})

export type AppRouter = typeof appRouter

/** `createCaller(ctx)` for tests and in-process callers. */
export const createCaller = createCallerFactory(appRouter)
