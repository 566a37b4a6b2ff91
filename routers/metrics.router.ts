/**
 * The metrics endpoints (specification: "Metrics endpoints"; API.md section 6), each at its
 * specified `/v1/...` path and again under `/api/v1/...` (one path per procedure, so two
 * procedures share the schemas and the service call), plus the workspace summary.
 * Metrics are reads sent as POST: tRPC mutations that a read-only token may call.
 */
import type { z } from 'zod'
import * as metrics from '../src/services/metrics.service.ts'
import {
  AgentMetricsInput,
  ExecutionMetricsInput,
  MessageMetricsInput,
  MetricsResponse,
  ThreadMetricsInput,
  WorkflowMetricsInput,
  WorkspaceMetricsInput,
  WorkspaceMetricsResponse,
} from '../src/schemas/metrics.schema.ts'
import { cachedOr, metricsCache } from '../src/trpc/cache.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

type Path = `/${string}`

/** The start of a metrics procedure at `path`: a read a read-only token may call. */
const at = (path: Path, tag: string) =>
  workspaceProcedure.meta({
    openapi: { method: 'POST', path, tags: [tag, 'Metrics'], summary: `Count or average ${tag.toLowerCase()} (cached 5 minutes)`, protect: true },
    readOnlyAllowed: true,
  })

/** The cached answer the middleware found, else the computed one. */
const answer = (cached: unknown, compute: () => Promise<z.infer<typeof MetricsResponse>>) =>
  cachedOr(cached, (value) => MetricsResponse.parse(value), compute)

const agents = (path: Path) =>
  at(path, 'Agents')
    .input(AgentMetricsInput)
    .output(MetricsResponse)
    .use(metricsCache)
    .mutation(({ ctx, input }) => answer(ctx.cachedAnswer, () => metrics.agents(ctx, input)))
const workflows = (path: Path) =>
  at(path, 'Workflows')
    .input(WorkflowMetricsInput)
    .output(MetricsResponse)
    .use(metricsCache)
    .mutation(({ ctx, input }) => answer(ctx.cachedAnswer, () => metrics.workflows(ctx, input)))
const executions = (path: Path) =>
  at(path, 'Workflow executions')
    .input(ExecutionMetricsInput)
    .output(MetricsResponse)
    .use(metricsCache)
    .mutation(({ ctx, input }) => answer(ctx.cachedAnswer, () => metrics.executions(ctx, input)))
const threads = (path: Path) =>
  at(path, 'Threads')
    .input(ThreadMetricsInput)
    .output(MetricsResponse)
    .use(metricsCache)
    .mutation(({ ctx, input }) => answer(ctx.cachedAnswer, () => metrics.threads(ctx, input)))
const messages = (path: Path) =>
  at(path, 'Messages')
    .input(MessageMetricsInput)
    .output(MetricsResponse)
    .use(metricsCache)
    .mutation(({ ctx, input }) => answer(ctx.cachedAnswer, () => metrics.messages(ctx, input)))

export const metricsRouter = router({
  agents: agents('/v1/agents/metrics'),
  apiAgents: agents('/api/v1/agents/metrics'),
  workflows: workflows('/v1/workflows/metrics'),
  apiWorkflows: workflows('/api/v1/workflows/metrics'),
  workflowExecutions: executions('/v1/workflow-executions/metrics'),
  apiWorkflowExecutions: executions('/api/v1/workflow-executions/metrics'),
  threads: threads('/v1/threads/metrics'),
  apiThreads: threads('/api/v1/threads/metrics'),
  messages: messages('/v1/messages/metrics'),
  apiMessages: messages('/api/v1/messages/metrics'),

  workspace: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_uuid}/metrics',
        tags: ['Workspaces', 'Metrics'],
        summary: 'Counts of resources, members, runs and tokens of a workspace',
        protect: true,
      },
    })
    .input(WorkspaceMetricsInput)
    .output(WorkspaceMetricsResponse)
    .query(async ({ ctx }) => ({ data: await metrics.workspace(ctx) })),
})
