/**
 * Single sign-on (docs/api/sso.md): the ways of signing in this server offers, and the exchange of
 * a one-time code for a token. The browser's round trip through the provider
 * (`GET /api/v1/auth/oidc`, `GET /api/v1/auth/oidc/callback`) answers redirects, not JSON: those are
 * plain routes, src/http/sso.routes.ts.
 */
import { z } from 'zod'
import { AuthProvidersResponse, OidcTokenInput, sso } from '../src/sso/index.ts'
import { SignInResponse } from '../src/tenancy/index.ts'
import { publicProcedure, router } from '../src/trpc/init.ts'
import { signUpLimit } from '../src/trpc/limits.ts'

export const ssoRouter = router({
  providers: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/auth/providers',
        tags: ['Authentication'],
        summary: 'How a person may sign in: password, single sign-on, or both',
        protect: false,
      },
    })
    .input(z.void())
    .output(AuthProvidersResponse)
    .query(({ ctx }) => sso.providers(ctx.config)),

  token: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/oidc/token',
        tags: ['Authentication'],
        summary: 'Exchange the one-time code of a single sign-on for a basic token',
        description:
          'Exchange the one-time code the single sign-on callback gave the console (`?code=`, valid 60 seconds, once) for a ' +
          'basic token: the answer of `POST /api/v1/auth/sign-in`. An unknown, expired or used code is a 400 naming `code`; ' +
          '404 when single sign-on is not configured.',
        protect: false,
      },
      rateLimited: true,
      // Single sign-on not configured.
      errorStatuses: [404],
    })
    // Per client address, the budget sign-in and sign-up share.
    .use(signUpLimit)
    .input(OidcTokenInput)
    .output(SignInResponse)
    .mutation(({ ctx, input }) => sso.exchangeLoginCode(ctx, input)),
})
