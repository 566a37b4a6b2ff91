/**
 * The access tokens area's data: the caller's application tokens (`accessTokens.list`), and what
 * changes them: `accessTokens.create` (answers the plaintext, once) and `accessTokens.delete`
 * (revokes), each of which marks the token lists stale.
 */
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { useSubmission, useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'

export type TokensInput = Exclude<RouterInputs['accessTokens']['list'], void | undefined>
type Inputs = RouterInputs['accessTokens']
type Outputs = RouterOutputs['accessTokens']

/** One page of tokens; the previous page stays shown while the next loads. */
export const tokensQueryOptions = (trpc: TRPC, input: TokensInput) =>
  trpc.accessTokens.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useTokens(input: TokensInput) {
  return useQuery(tokensQueryOptions(useTRPC(), input))
}

/** Marks every token list stale. */
function useRefreshTokens() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return () => void queryClient.invalidateQueries(trpc.accessTokens.list.pathFilter())
}

export function useCreateToken(config?: MutationConfig<Outputs['create'], Inputs['create']>) {
  const refresh = useRefreshTokens()
  return useSubmission(useTRPC().accessTokens.create.mutationOptions(updatingCache(config, refresh)))
}

export function useRevokeToken(config?: MutationConfig<Outputs['delete'], Inputs['delete']>) {
  const refresh = useRefreshTokens()
  return useSubmission(useTRPC().accessTokens.delete.mutationOptions(updatingCache(config, refresh)))
}
