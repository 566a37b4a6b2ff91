/**
 * The metrics area's data: the current workspace's live counts (`metrics.workspace`) and one
 * answer of the five metrics endpoints (`metrics.agents`, `.workflows`, `.workflowExecutions`,
 * `.threads`, `.messages`). Those are POST procedures (mutations to tRPC) that change nothing,
 * so they are read as queries here, keyed like tRPC's own keys by the endpoint's path and the
 * body sent (the call itself is ./metrics-model.ts's `fetchMetric`). The agents, threads and
 * workflows the filters offer come from ../agents/api.ts, ../chat/api.ts and ../workflows/api.ts.
 */
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import type { TRPCQueryKey } from '@trpc/tanstack-react-query'
import { useTRPC, type TRPC } from '../../lib/trpc.ts'
import { fetchMetric, type requestOf, type ResourceKey } from './metrics-model.ts'

type Body = ReturnType<typeof requestOf>

export const workspaceSummaryQueryOptions = (trpc: TRPC, workspaceUuid: string) => trpc.metrics.workspace.queryOptions({ workspace_uuid: workspaceUuid })

/** The live counts of a workspace (not cached by the service). */
export function useWorkspaceSummary(workspaceUuid: string) {
  return useQuery(workspaceSummaryQueryOptions(useTRPC(), workspaceUuid))
}

/** The answer of `resource`'s metrics endpoint to `body`; the previous answer stays shown while the next is computed. */
export function metricQueryOptions(trpc: TRPC, resource: ResourceKey, body: Body) {
  const [path] = trpc.metrics[resource].mutationKey()
  const queryKey: TRPCQueryKey = [path, { input: body, type: 'query' }]
  return queryOptions({ queryKey, queryFn: () => fetchMetric(resource, body), placeholderData: keepPreviousData })
}

export function useMetric(resource: ResourceKey, body: Body) {
  return useQuery(metricQueryOptions(useTRPC(), resource, body))
}
