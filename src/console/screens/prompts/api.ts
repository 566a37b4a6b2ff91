/**
 * The prompts area's data: the list (`prompts.list`), one prompt (`prompts.retrieve`), what
 * changes one (`prompts.create`, `prompts.update`, `prompts.delete`), a run of one
 * (`runs.prompt`, which changes no cached data), and the models a run may pick
 * (`largeLanguageModels.list` with a usable credential).
 *
 * A create or update stores the prompt answered as the cached record; a deletion drops it; each
 * marks the prompt lists stale.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'

export type PromptsInput = Exclude<RouterInputs['prompts']['list'], void | undefined>
type Inputs = RouterInputs['prompts']
type Outputs = RouterOutputs['prompts']

/** One page of prompts; the previous page stays shown while the next loads. */
export const promptsQueryOptions = (trpc: TRPC, input: PromptsInput) =>
  trpc.prompts.list.queryOptions(input, { placeholderData: keepPreviousData })

export function usePrompts(input: PromptsInput) {
  return useQuery(promptsQueryOptions(useTRPC(), input))
}

export const promptQueryOptions = (trpc: TRPC, promptUuid: string) => trpc.prompts.retrieve.queryOptions({ prompt_uuid: promptUuid })

export function usePrompt(promptUuid: string) {
  return useQuery(promptQueryOptions(useTRPC(), promptUuid))
}

/** The models a run may use: the first 100 with a usable credential. */
export const availableModelsQueryOptions = (trpc: TRPC) =>
  trpc.largeLanguageModels.list.queryOptions({ per_page: 100, is_available: true }, { staleTime: 60_000 })

export function useAvailableModels() {
  return useQuery(availableModelsQueryOptions(useTRPC()))
}

/** After a change answered with the prompt: every list is stale, and it is the cached record. */
function useStorePrompt() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return (answer: Outputs['retrieve']) => {
    void queryClient.invalidateQueries(trpc.prompts.list.pathFilter())
    queryClient.setQueryData(trpc.prompts.retrieve.queryKey({ prompt_uuid: answer.data.uuid }), answer)
  }
}

export function useCreatePrompt(config?: MutationConfig<Outputs['create'], Inputs['create']>) {
  const store = useStorePrompt()
  return useMutation(useTRPC().prompts.create.mutationOptions(updatingCache(config, store)))
}

export function useUpdatePrompt(config?: MutationConfig<Outputs['update'], Inputs['update']>) {
  const store = useStorePrompt()
  return useMutation(useTRPC().prompts.update.mutationOptions(updatingCache(config, store)))
}

export function useDeletePrompt(config?: MutationConfig<Outputs['delete'], Inputs['delete']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useMutation(
    trpc.prompts.delete.mutationOptions(
      updatingCache(config, (answer, input) => {
        queryClient.removeQueries(trpc.prompts.retrieve.queryFilter(input))
        void queryClient.invalidateQueries(trpc.prompts.list.pathFilter())
      }),
    ),
  )
}

/** Runs a prompt with its inputs; the answer is the run's output. */
export function useRunPrompt() {
  return useMutation(useTRPC().runs.prompt.mutationOptions())
}
