/**
 * The workflows area's data: the list (`workflows.list`), one workflow (`workflows.retrieve`),
 * the node-type catalog (`workflowNodeTypes.list`), and what changes a workflow:
 * `workflows.create`, `workflows.update` (the graph and details, or `is_active` alone),
 * `workflows.delete`, `workflows.run`; its executions (`workflowExecutions.list`,
 * `workflowExecutions.retrieve`), cancelled or retried (`workflowExecutions.cancel`, `.retry`).
 * Also the workflows as a picker's choices (the first 100 by name: the command room and metrics),
 * and the accounts, agents and prompts a node's parameter names, picked by name (`accounts.list`,
 * `agents.list`, `prompts.list`: the first 100 by name).
 *
 * An update stores the workflow answered as the cached record; every change marks the workflow
 * lists stale. A run, a cancel and a retry mark every execution query stale. Executions are read
 * again every 2 s while one shown is queued or running.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'
import { isUnderway } from './ExecutionView.tsx'

export type WorkflowsInput = Exclude<RouterInputs['workflows']['list'], void | undefined>
export type ExecutionsInput = Exclude<RouterInputs['workflowExecutions']['list'], void | undefined>
type Inputs = RouterInputs['workflows']
type Outputs = RouterOutputs['workflows']

/** How often executions are read again while one is queued or running. */
const EXECUTION_REFRESH_MS = 2000

/** One page of workflows; the previous page stays shown while the next loads. */
export const workflowsQueryOptions = (trpc: TRPC, input: WorkflowsInput) => trpc.workflows.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useWorkflows(input: WorkflowsInput) {
  return useQuery(workflowsQueryOptions(useTRPC(), input))
}

/** The workflows a picker offers: the first 100 by name (read while `enabled`). */
export const workflowChoicesQueryOptions = (trpc: TRPC, enabled: boolean) => trpc.workflows.list.queryOptions({ per_page: 100, sort: 'name' }, { enabled })

export function useWorkflowChoices(enabled: boolean) {
  return useQuery(workflowChoicesQueryOptions(useTRPC(), enabled))
}

/** What a node parameter's picker offers: the first 100 by name of the workspace's accounts, agents or prompts. */
const CHOICES = { per_page: 100, sort: 'name' } as const
const CHOICES_STALE_MS = 30_000

export function useAccountChoices(enabled: boolean) {
  return useQuery(useTRPC().accounts.list.queryOptions(CHOICES, { enabled, staleTime: CHOICES_STALE_MS }))
}

export function useAgentChoices(enabled: boolean) {
  return useQuery(useTRPC().agents.list.queryOptions(CHOICES, { enabled, staleTime: CHOICES_STALE_MS }))
}

export function usePromptChoices(enabled: boolean) {
  return useQuery(useTRPC().prompts.list.queryOptions(CHOICES, { enabled, staleTime: CHOICES_STALE_MS }))
}

export const workflowQueryOptions = (trpc: TRPC, workflowUuid: string) => trpc.workflows.retrieve.queryOptions({ workflow_uuid: workflowUuid })

export function useWorkflow(workflowUuid: string) {
  return useQuery(workflowQueryOptions(useTRPC(), workflowUuid))
}

/** The node types a graph is built from; they do not change while the service runs. */
export const nodeTypesQueryOptions = (trpc: TRPC) => trpc.workflowNodeTypes.list.queryOptions(undefined, { staleTime: Infinity })

export function useNodeTypes() {
  return useQuery(nodeTypesQueryOptions(useTRPC()))
}

export function useCreateWorkflow(config?: MutationConfig<Outputs['create'], Inputs['create']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useMutation(
    trpc.workflows.create.mutationOptions(
      updatingCache(config, () => {
        void queryClient.invalidateQueries(trpc.workflows.list.pathFilter())
      }),
    ),
  )
}

/** Saves the graph and details, or turns the workflow on or off; the answer is the cached record. */
export function useUpdateWorkflow(config?: MutationConfig<Outputs['update'], Inputs['update']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useMutation(
    trpc.workflows.update.mutationOptions(
      updatingCache(config, (answer, input) => {
        queryClient.setQueryData(trpc.workflows.retrieve.queryKey({ workflow_uuid: input.workflow_uuid }), answer)
        void queryClient.invalidateQueries(trpc.workflows.list.pathFilter())
      }),
    ),
  )
}

export function useDeleteWorkflow(config?: MutationConfig<Outputs['delete'], Inputs['delete']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useMutation(
    trpc.workflows.delete.mutationOptions(
      updatingCache(config, () => {
        void queryClient.invalidateQueries(trpc.workflows.list.pathFilter())
      }),
    ),
  )
}

/** Marks every execution query stale (after a run, a cancel or a retry). */
function useRefreshExecutions() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return () => void queryClient.invalidateQueries(trpc.workflowExecutions.pathFilter())
}

/** Runs the workflow by hand; its executions are read again. */
export function useRunWorkflow() {
  const refresh = useRefreshExecutions()
  return useMutation(useTRPC().workflows.run.mutationOptions({ onSuccess: refresh }))
}

/** One page of a workflow's executions; the previous page stays shown while the next loads. */
export const executionsQueryOptions = (trpc: TRPC, input: ExecutionsInput) =>
  trpc.workflowExecutions.list.queryOptions(input, {
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.data.some((execution) => isUnderway(execution.status)) ? EXECUTION_REFRESH_MS : false),
  })

export function useExecutions(input: ExecutionsInput) {
  return useQuery(executionsQueryOptions(useTRPC(), input))
}

export const executionQueryOptions = (trpc: TRPC, executionUuid: string, enabled = true) =>
  trpc.workflowExecutions.retrieve.queryOptions(
    { execution_uuid: executionUuid },
    { enabled, refetchInterval: (query) => (query.state.data && isUnderway(query.state.data.data.status) ? EXECUTION_REFRESH_MS : false) },
  )

/** One execution, read again while it is under way; none read while `executionUuid` is null. */
export function useExecution(executionUuid: string | null) {
  return useQuery(executionQueryOptions(useTRPC(), executionUuid ?? '', Boolean(executionUuid)))
}

export function useCancelExecution() {
  const refresh = useRefreshExecutions()
  return useMutation(useTRPC().workflowExecutions.cancel.mutationOptions({ onSuccess: refresh }))
}

/** Retries a failed or cancelled execution; the answer is the new execution. */
export function useRetryExecution() {
  const refresh = useRefreshExecutions()
  return useMutation(useTRPC().workflowExecutions.retry.mutationOptions({ onSuccess: refresh }))
}
