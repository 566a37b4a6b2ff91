/**
 * Starting a session: `auth.signIn` and `auth.signUp`, which answer a basic token, and
 * `sso.token`, which exchanges the one-time code of a single sign-on for one (docs/api/sso.md). On
 * success the token is kept (../../lib/session.tsx's `signedIn`) before the screen's own
 * `onSuccess` runs, so the screen it goes to calls with it. None needs a token, and none touches
 * cached data. `sso.providers` tells the sign-in screen which ways in the server offers.
 */
import { useQuery } from '@tanstack/react-query'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { signedIn } from '../../lib/session.tsx'
import { useSubmission, useTRPC, type MutationConfig, updatingCache } from '../../lib/trpc.ts'

type Inputs = RouterInputs['auth']
type Outputs = RouterOutputs['auth']

export function useSignIn(config?: MutationConfig<Outputs['signIn'], Inputs['signIn']>) {
  return useSubmission(
    useTRPC().auth.signIn.mutationOptions(
      updatingCache(config, (answer) => {
        signedIn(answer.data.access_token)
      }),
    ),
  )
}

export function useSignUp(config?: MutationConfig<Outputs['signUp'], Inputs['signUp']>) {
  return useSubmission(
    useTRPC().auth.signUp.mutationOptions(
      updatingCache(config, (answer) => {
        signedIn(answer.data.access_token)
      }),
    ),
  )
}

/** How a person may sign in here: `{password, oidc: {name} | null}` (public). */
export function useProviders() {
  return useQuery(useTRPC().sso.providers.queryOptions(undefined, { staleTime: Infinity, retry: 1 }))
}

export function useOidcToken(config?: MutationConfig<RouterOutputs['sso']['token'], RouterInputs['sso']['token']>) {
  return useSubmission(
    useTRPC().sso.token.mutationOptions(
      updatingCache(config, (answer) => {
        signedIn(answer.data.access_token)
      }),
    ),
  )
}
