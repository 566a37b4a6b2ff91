/** Authentication (docs/api/authentication.md): sign-up, sign-in, logout. */
import { z } from 'zod'
import { auth } from '../src/tenancy/index.ts'
import { SignInInput, SignInResponse, SignUpInput } from '../src/tenancy/index.ts'
import { authedProcedure, publicProcedure, router } from '../src/trpc/init.ts'
import { signInLimit, signUpLimit } from '../src/trpc/limits.ts'

export const authRouter = router({
  signUp: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/auth/sign-up', tags: ['Authentication'], summary: 'Create a user and their primary workspace', protect: false },
      successStatus: 201,
      rateLimited: true,
      // SIGN_UP_ENABLED=false.
      errorStatuses: [403],
    })
    .use(signUpLimit)
    .input(SignUpInput)
    .output(SignInResponse)
    .mutation(({ ctx, input }) => auth.signUp(ctx, input)),

  signIn: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/auth/sign-in', tags: ['Authentication'], summary: 'Exchange e-mail and password for a basic token', protect: false },
      rateLimited: true,
      // PASSWORD_SIGN_IN=false (docs/api/sso.md).
      errorStatuses: [403],
    })
    .use(signInLimit)
    .input(SignInInput)
    .output(SignInResponse)
    .mutation(({ ctx, input }) => auth.signIn(ctx, input)),

  logout: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/auth/logout', tags: ['Authentication'], summary: 'Revoke the token of this request', protect: true },
      successStatus: 204,
      readOnlyAllowed: true,
    })
    .input(z.strictObject({}))
    .output(z.void())
    .mutation(({ ctx }) => auth.logout(ctx)),
})
