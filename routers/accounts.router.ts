/**
 * Accounts (docs/api/resources.md, "Accounts"): credentials of a provider in a workspace. The secret
 * is write-only: answers show `secret_hint` and `has_secret`, never the secret.
 */
import { z } from 'zod'
import { accounts } from '../src/catalog/index.ts'
import { Account, AccountListInput, CreateAccountInput, DeleteAccountInput, RetrieveAccountInput, UpdateAccountInput } from '../src/catalog/index.ts'
import { envelope, paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const AccountResponse = envelope(Account)
const tags = ['Accounts']

export const accountsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/accounts', tags, summary: 'Accounts the caller may see in the workspace', protect: true } })
    .input(AccountListInput)
    .output(paginated(Account))
    .query(({ ctx, input }) => accounts.list(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/accounts', tags, summary: 'Create an account (the secret is stored encrypted)', protect: true }, successStatus: 201 })
    .input(CreateAccountInput)
    .output(AccountResponse)
    .mutation(({ ctx, input }) => accounts.create(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/accounts/{account_uuid}', tags, summary: 'Retrieve an account', protect: true } })
    .input(RetrieveAccountInput)
    .output(AccountResponse)
    .query(({ ctx, input }) => accounts.retrieve(ctx, input.account_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/v1/accounts/{account_uuid}', tags, summary: 'Update an account (write permission)', protect: true } })
    .input(UpdateAccountInput)
    .output(AccountResponse)
    .mutation(({ ctx, input }) => accounts.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/accounts/{account_uuid}', tags, summary: 'Delete an account (admin permission)', protect: true },
      successStatus: 204,
    })
    .input(DeleteAccountInput)
    .output(z.void())
    .mutation(({ ctx, input }) => accounts.remove(ctx, input.account_uuid)),
})
