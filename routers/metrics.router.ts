/**
 * The metrics endpoints (specification: "Metrics endpoints"; docs/api/metrics.md), one procedure
 * each, answering at `/api/v1/<resource>/metrics` and at the specified `/v1/<resource>/metrics`
 * (see {@link metricProcedure}), plus the workspace summary.
 * Metrics are reads sent as POST: tRPC mutations that a read-only token may call, answered from
 * the metrics cache when it holds the answer (src/trpc/cache.ts), before the input and output
 * parsers run.
 */
import type { z } from 'zod'
import { metrics } from '../src/metrics/index.ts'
import { AgentMetricsInput, ExecutionMetricsInput, MessageMetricsInput, MetricsResponse, ThreadMetricsInput, WorkflowMetricsInput, WorkspaceMetricsInput, WorkspaceMetricsResponse } from '../src/metrics/index.ts'
import { cachedWorkspaceProcedure } from '../src/trpc/cache.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

/**
 * A metrics procedure of `segment` before its resolver: a cached read a read-only token may call,
 * at `/api/v1/<segment>/metrics` and (`alsoAt`, src/trpc/init.ts) at the specification's
 * `/v1/<segment>/metrics`: one operation, one cache entry, two paths.
 * The cache comes before the parsers: a hit was validated when it was stored (src/trpc/cache.ts).
 */
const metricProcedure = <Input extends z.ZodType>(segment: string, tag: string, input: Input) =>
  cachedWorkspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `/api/v1/${segment}/metrics`,
        tags: [tag, 'Metrics'],
        summary: `Count or average ${tag.toLowerCase()} (cached 5 minutes)`,
        protect: true,
      },
      alsoAt: `/v1/${segment}/metrics`,
      readOnlyAllowed: true,
      storesNothing: true,
    })
    .input(input)
    .output(MetricsResponse)

export const metricsRouter = router({
  agents: metricProcedure('agents', 'Agents', AgentMetricsInput).mutation(({ ctx, input }) => metrics.agents(ctx, input)),
  workflows: metricProcedure('workflows', 'Workflows', WorkflowMetricsInput).mutation(({ ctx, input }) => metrics.workflows(ctx, input)),
  workflowExecutions: metricProcedure('workflow-executions', 'Workflow executions', ExecutionMetricsInput).mutation(({ ctx, input }) =>
    metrics.executions(ctx, input),
  ),
  threads: metricProcedure('threads', 'Threads', ThreadMetricsInput).mutation(({ ctx, input }) => metrics.threads(ctx, input)),
  messages: metricProcedure('messages', 'Messages', MessageMetricsInput).mutation(({ ctx, input }) => metrics.messages(ctx, input)),

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
