/** The authenticated user and their access tokens (docs/api/authentication.md). */
import { tokens } from '../src/tenancy/index.ts'
import { users } from '../src/tenancy/index.ts'
import { z } from 'zod'
import { AccessTokenList, AccessTokenListInput, AccessTokenResponse, AccessTokenUuidInput, CreateAccessTokenInput, CreatedAccessTokenResponse, UserResponse } from '../src/tenancy/index.ts'
import { authedProcedure, router } from '../src/trpc/init.ts'

export const userRouter = router({
  me: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/user', tags: ['User'], summary: 'The authenticated user (basic or application token)', protect: true } })
    .input(z.void())
    .output(UserResponse)
    .query(({ ctx }) => users.me(ctx)),

  token: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/user/token', tags: ['User'], summary: 'The token used for this request', protect: true } })
    .input(z.void())
    .output(AccessTokenResponse)
    .query(({ ctx }) => tokens.current(ctx)),
})

export const accessTokensRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/access-tokens', tags: ['Access tokens'], summary: 'List application access tokens', protect: true } })
    .input(AccessTokenListInput)
    .output(AccessTokenList)
    .query(({ ctx, input }) => tokens.list(ctx, input)),

  create: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/access-tokens', tags: ['Access tokens'], summary: 'Create an application access token (plaintext shown once)', protect: true },
      successStatus: 201,
    })
    .input(CreateAccessTokenInput)
    .output(CreatedAccessTokenResponse)
    .mutation(({ ctx, input }) => tokens.create(ctx, input)),

  delete: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/access-tokens/{token_uuid}', tags: ['Access tokens'], summary: 'Revoke an application access token', protect: true },
      successStatus: 204,
    })
    .input(AccessTokenUuidInput)
    .output(z.void())
    .mutation(({ ctx, input }) => tokens.remove(ctx, input.token_uuid)),
})
