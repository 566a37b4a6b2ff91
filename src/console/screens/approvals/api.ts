/**
 * The approvals area's data: the tool calls waiting for a person (`approvals.list`), one approval
 * (`approvals.retrieve`), and the decisions `approvals.approve` and `approvals.deny`. A decision
 * stores the approval the service answered and marks every approval list stale; so does a 409
 * (someone decided it first, or it expired), after which the approval is read again.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { problemOf, type RouterInputs, type RouterOutputs } from '../../lib/api.ts'
import { useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'

export type ApprovalsInput = Exclude<RouterInputs['approvals']['list'], void | undefined>
export type Approval = RouterOutputs['approvals']['list']['data'][number]
type Inputs = RouterInputs['approvals']
type Outputs = RouterOutputs['approvals']

/** One page of approvals, newest first; the previous page stays shown while the next loads. */
export const approvalsQueryOptions = (trpc: TRPC, input: ApprovalsInput) =>
  trpc.approvals.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useApprovals(input: ApprovalsInput) {
  return useQuery(approvalsQueryOptions(useTRPC(), input))
}

/** Reads one approval afresh (after a 409, to learn what became of it). */
export function useFetchApproval() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return (approvalUuid: string) =>
    queryClient.fetchQuery({ ...trpc.approvals.retrieve.queryOptions({ approval_uuid: approvalUuid }), staleTime: 0 })
}

/**
 * What both decisions do to the cache: the answered approval is the cached record and every list
 * is stale; on a 409 the lists and the record are stale, then the screen's own `onError` runs.
 */
function useDecisionCache<Variables extends { approval_uuid: string }>(config: MutationConfig<Outputs['approve'], Variables> | undefined) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const refreshLists = () => void queryClient.invalidateQueries(trpc.approvals.list.pathFilter())
  const options = updatingCache(config, (answer: Outputs['approve']) => {
    queryClient.setQueryData(trpc.approvals.retrieve.queryKey({ approval_uuid: answer.data.uuid }), answer)
    refreshLists()
  })
  return {
    ...options,
    onError: (error: unknown, variables: Variables) => {
      if (problemOf(error).status === 409) {
        refreshLists()
        void queryClient.invalidateQueries(trpc.approvals.retrieve.queryFilter({ approval_uuid: variables.approval_uuid }))
      }
      return config?.onError?.(error, variables)
    },
  }
}

/** Approves a pending call, with the model's arguments or edited ones (checked against the tool's schema: a 400 naming `arguments.<field>`). */
export function useApprove(config?: MutationConfig<Outputs['approve'], Inputs['approve']>) {
  return useMutation(useTRPC().approvals.approve.mutationOptions(useDecisionCache(config)))
}

/** Denies a pending call; the model reads the reason. */
export function useDeny(config?: MutationConfig<Outputs['deny'], Inputs['deny']>) {
  return useMutation(useTRPC().approvals.deny.mutationOptions(useDecisionCache(config)))
}
