/**
 * The usage area's data (docs/api/usage-and-budgets.md): the workspace's model usage summed by
 * period and by agent, user, model or access token (`usage.summary`, `GET /api/v1/usage`), and
 * its budgets with their spend (`budgets.list`); what changes budgets: `budgets.create`,
 * `budgets.update` and `budgets.delete`. A budget answered is stored as its cached record and the
 * budget lists are marked stale; a deleted one's record is dropped. The agents, members and
 * tokens a budget may cover come from ../agents/api.ts, ../../lib/session-api.ts and
 * ../tokens/api.ts.
 */
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { useSubmission, useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'

export type UsageInput = Exclude<RouterInputs['usage']['summary'], void | undefined>
export type UsageAnswer = RouterOutputs['usage']['summary']
export type UsageRow = UsageAnswer['data'][number]
export type BudgetsInput = Exclude<RouterInputs['budgets']['list'], void | undefined>
export type Budget = RouterOutputs['budgets']['list']['data'][number]
type Inputs = RouterInputs['budgets']
type Outputs = RouterOutputs['budgets']

/** Usage summed as `input` groups it; the previous answer stays shown while the next is read. */
export const usageQueryOptions = (trpc: TRPC, input: UsageInput) =>
  trpc.usage.summary.queryOptions(input, { placeholderData: keepPreviousData })

export function useUsage(input: UsageInput) {
  return useQuery(usageQueryOptions(useTRPC(), input))
}

/** A page of budgets, each with its spend read live. */
export const budgetsQueryOptions = (trpc: TRPC, input: BudgetsInput) =>
  trpc.budgets.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useBudgets(input: BudgetsInput) {
  return useQuery(budgetsQueryOptions(useTRPC(), input))
}

/** Stores a budget answered as its cached record and marks the budget lists stale. */
function useStoreBudget() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return (answer: Outputs['create']) => {
    queryClient.setQueryData(trpc.budgets.retrieve.queryKey({ budget_uuid: answer.data.uuid }), answer)
    void queryClient.invalidateQueries(trpc.budgets.list.pathFilter())
  }
}

export function useCreateBudget(config?: MutationConfig<Outputs['create'], Inputs['create']>) {
  const store = useStoreBudget()
  return useSubmission(useTRPC().budgets.create.mutationOptions(updatingCache(config, store)))
}

export function useUpdateBudget(config?: MutationConfig<Outputs['update'], Inputs['update']>) {
  const store = useStoreBudget()
  return useSubmission(useTRPC().budgets.update.mutationOptions(updatingCache(config, store)))
}

/** Deletes a budget; its record is dropped and the lists marked stale. */
export function useDeleteBudget(config?: MutationConfig<Outputs['delete'], Inputs['delete']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useSubmission(
    trpc.budgets.delete.mutationOptions(
      updatingCache(config, (_answer, input) => {
        queryClient.removeQueries(trpc.budgets.retrieve.queryFilter({ budget_uuid: input.budget_uuid }))
        void queryClient.invalidateQueries(trpc.budgets.list.pathFilter())
      }),
    ),
  )
}
