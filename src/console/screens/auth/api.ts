/**
 * Starting a session: `auth.signIn` and `auth.signUp`, which answer a basic token. On success the
 * token is kept (../../lib/session.tsx's `signedIn`) before the screen's own `onSuccess` runs, so
 * the screen it goes to calls with it. Neither needs a token, and neither touches cached data.
 */
import { useMutation } from '@tanstack/react-query'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { signedIn } from '../../lib/session.tsx'
import { useTRPC, type MutationConfig, updatingCache } from '../../lib/trpc.ts'

type Inputs = RouterInputs['auth']
type Outputs = RouterOutputs['auth']

export function useSignIn(config?: MutationConfig<Outputs['signIn'], Inputs['signIn']>) {
  return useMutation(
    useTRPC().auth.signIn.mutationOptions(
      updatingCache(config, (answer) => {
        signedIn(answer.data.access_token)
      }),
    ),
  )
}

export function useSignUp(config?: MutationConfig<Outputs['signUp'], Inputs['signUp']>) {
  return useMutation(
    useTRPC().auth.signUp.mutationOptions(
      updatingCache(config, (answer) => {
        signedIn(answer.data.access_token)
      }),
    ),
  )
}
