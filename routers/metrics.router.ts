/**
 * The metrics endpoints (specification: "Metrics endpoints"; docs/api/metrics.md), each at its
 * specified `/v1/...` path and again under `/api/v1/...` (one path per procedure, so each
 * endpoint is two procedures built by {@link endpoint}), plus the workspace summary.
 * Metrics are reads sent as POST: tRPC mutations that a read-only token may call, answered from
 * the metrics cache when it holds the answer (src/trpc/cache.ts), before the input and output
 * parsers run.
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
  type TMetricsResponse,
} from '../src/schemas/metrics.schema.ts'
import { cachedWorkspaceProcedure } from '../src/trpc/cache.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'
import type { ResourceCtx } from '../src/context.ts'

/**
 * A metrics procedure at `path` before its resolver: a cached read a read-only token may call.
 * The cache comes before the parsers: a hit was validated when it was stored (src/trpc/cache.ts).
 */
const metricProcedure = <Input extends z.ZodType>(path: `/${string}`, tag: string, input: Input) =>
  cachedWorkspaceProcedure
    .meta({
      openapi: { method: 'POST', path, tags: [tag, 'Metrics'], summary: `Count or average ${tag.toLowerCase()} (cached 5 minutes)`, protect: true },
      readOnlyAllowed: true,
      storesNothing: true,
    })
    .input(input)
    .output(MetricsResponse)

/** The parsed input of {@link metricProcedure} as its resolver receives it. */
type ParsedInput<Input extends z.ZodType> = Parameters<Parameters<ReturnType<typeof metricProcedure<Input>>['mutation']>[0]>[0]['input']

/** The two procedures of one metrics endpoint, at `/v1/<segment>/metrics` and `/api/v1/<segment>/metrics`. */
function endpoint<Input extends z.ZodType>(
  segment: string,
  tag: string,
  input: Input,
  compute: (ctx: ResourceCtx, input: ParsedInput<Input>) => Promise<TMetricsResponse>,
) {
  const at = (path: `/${string}`) => metricProcedure(path, tag, input).mutation(({ ctx, input }) => compute(ctx, input))
  return [at(`/v1/${segment}/metrics`), at(`/api/v1/${segment}/metrics`)] as const
}

const [agents, apiAgents] = endpoint('agents', 'Agents', AgentMetricsInput, metrics.agents)
const [workflows, apiWorkflows] = endpoint('workflows', 'Workflows', WorkflowMetricsInput, metrics.workflows)
const [workflowExecutions, apiWorkflowExecutions] = endpoint(
  'workflow-executions',
  'Workflow executions',
  ExecutionMetricsInput,
  metrics.executions,
)
const [threads, apiThreads] = endpoint('threads', 'Threads', ThreadMetricsInput, metrics.threads)
const [messages, apiMessages] = endpoint('messages', 'Messages', MessageMetricsInput, metrics.messages)

export const metricsRouter = router({
  agents,
  apiAgents,
  workflows,
  apiWorkflows,
  workflowExecutions,
  apiWorkflowExecutions,
  threads,
  apiThreads,
  messages,
  apiMessages,

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
