/**
 * The services a workflow's nodes call (the engine's `WorkflowServices` port,
 * src/workflows/types.ts): each call builds the acting context of the execution's user in
 * the workflow's workspace (src/access/acting-context.ts) and goes through the same services
 * and access rules a request of that user would. The runtime hands this to the engine
 * (src/app.ts: `workflows.bind(...)`), so the engine imports no service.
 */
import { AUTH_SCHEMES } from '../../entities/index.ts'
import { findResource } from '../access/resource-access.ts'
import type { ServiceDeps } from '../context.ts'
import { accountSealContext } from '../platform/account-secrets.ts'
import { keyringOf, open } from '../platform/secrets.ts'
import type { AccountCredentialAnswer, Actor, WorkflowServices } from './types.ts'
import { actingContext } from '../access/acting-context.ts'
import { runAgent, runPrompt } from '../runs/index.ts'

const schemeOf = (value: unknown) => AUTH_SCHEMES.find((scheme) => scheme === value)

/**
 * Account `uuid` as the `http_request` node applies it, when `actor` may use it in the
 * workspace: visible to the user there (the access rules of any request) and of that workspace.
 * @throws NotFoundError when the actor's user is no longer a member of the workspace;
 *   SecretUnavailableError when the secret cannot be opened (its key is not configured).
 */
async function accountCredential(deps: ServiceDeps, actor: Actor, uuid: string): Promise<AccountCredentialAnswer> {
  const ctx = await actingContext(deps, actor.userId, actor.workspaceId)
  const found = await findResource(ctx, 'accounts', uuid)
  if (!found || found.workspaceId !== actor.workspaceId) return { usable: false }
  const [row] = await ctx.em.execute<{ ciphertext: string | null; keyId: string | null; scheme: unknown; parameter: string | null }[]>(
    `select ac.secret_ciphertext as ciphertext, ac.secret_key_id as "keyId", p.auth_scheme as scheme, p.auth_parameter as parameter
     from accounts ac join providers p on p.id = ac.provider_id where ac.id = ?`,
    [found.id],
  )
  const scheme = schemeOf(row?.scheme)
  if (!row || !scheme || scheme === 'none' || !row.ciphertext || !row.keyId) return { usable: true, credential: null }
  const secret = open(keyringOf(deps.config), { ciphertext: row.ciphertext, keyId: row.keyId }, accountSealContext(uuid))
  return { usable: true, credential: { scheme, parameter: row.parameter, secret } }
}

/**
 * The {@link WorkflowServices} of this process over `deps` (the runtime's long-lived
 * dependencies; the engine the nodes run in is among them, `deps.workflows`).
 */
export function createWorkflowNodeServices(deps: ServiceDeps): WorkflowServices {
  return {
    runPrompt: async (actor, input, signal) => runPrompt(await actingContext(deps, actor.userId, actor.workspaceId), input, { signal }),
    runAgent: async (actor, input, signal, o) =>
      runAgent(await actingContext(deps, actor.userId, actor.workspaceId), input, { signal, toolDepth: o?.toolDepth, untilEnd: true }),
    accountCredential: (actor, uuid) => accountCredential(deps, actor, uuid),
  }
}
