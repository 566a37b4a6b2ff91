/**
 * The OAuth consent's data (docs/api/mcp.md, "Authorization"): the client asking
 * (`oauth.client`) and the user's decision (`oauth.consent`), which answers where the browser
 * goes next. A consent changes nothing the console caches.
 */
import { useMutation, useQuery } from '@tanstack/react-query'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { useTRPC, type MutationConfig } from '../../lib/trpc.ts'

export type ConsentInput = RouterInputs['oauth']['consent']

export function useOAuthClient(clientId: string) {
  return useQuery(useTRPC().oauth.client.queryOptions({ client_id: clientId }, { enabled: clientId !== '', retry: false }))
}

export function useConsent(config?: MutationConfig<RouterOutputs['oauth']['consent'], ConsentInput>) {
  return useMutation(useTRPC().oauth.consent.mutationOptions({ onSuccess: config?.onSuccess, onError: config?.onError }))
}
