/**
 * Agents (specification: "Agent (response shape)", "Update an Agent"; docs/api/tenancy.md and docs/api/resources.md):
 * list, create, retrieve, update (`PUT`), delete, share, favourite. Every function starts with
 * the access check of src/access/resource-access.ts (retrieve folds it into its one statement);
 * every visibility and share rule runs in SQL. Reads are in ./agent-read.service.ts; the
 * references a request names (photo, tools, accounts, workflows, files, categories) are resolved
 * by the access rules of src/access/references.ts before anything is written.
 */
import { queueTrainedFiles, removeAgentKnowledge, syncAgentFiles } from '../knowledge/index.ts'
import type { ReadCache, ReadStore } from '../platform/read-cache.ts'
import { LockMode } from '@mikro-orm/core'
import { Agent, type IAgent, type ProfilePhotoConfigValue } from '../../entities/index.ts'
import { agentPivotRows, resolveAgentLinks, resolveProfilePhotoKey, type AgentLinks } from '../access/references.ts'
import { requireResource, type ResourceAccess } from '../access/resource-access.ts'
import { replacePivotRows } from '../platform/db.ts'
import { ValidationError } from '../platform/errors.ts'
import {
  AGENT_METADATA_MAX_BYTES,
  type TCreateAgentInput,
  type TListAgentsInput,
  type TShareAgentInput,
  type TUpdateAgentInput,
} from './agent-input.schema.ts'
import type { TAgent } from './agent.schema.ts'
import { jsonBytes } from '../access/wire.ts'
import { listAgents } from './agent-list.service.ts'
import { loadAgent, retrieveAgent } from './agent-read.service.ts'
import { addFavorite, removeFavorite } from '../access/favorites.ts'
import { shareResource } from '../access/shares.ts'
import type { ResourceCtx } from '../context.ts'
import { mergeMetadata } from '../access/metadata.ts'
import { audit, fieldChanges } from '../access/audit.ts'
import { recordVersion } from './agent-versions.ts'
import { versionSnapshot } from './agent-versions.service.ts'
import type { TAgentVersionPathInput } from './agent-version.schema.ts'

type Envelope = { data: TAgent }

/** This process's cached agent reads, one store per read cache (src/platform/read-cache.ts). */
const agentReads = new WeakMap<ReadCache, ReadStore<Envelope>>()

function agentStore(cache: ReadCache): ReadStore<Envelope> {
  let store = agentReads.get(cache)
  if (!store) {
    store = cache.store<Envelope>()
    agentReads.set(cache, store)
  }
  return store
}

/** The agents the caller may list, filtered, sorted and paginated (see {@link listAgents}). */
export function list(ctx: ResourceCtx, input: TListAgentsInput) {
  return listAgents(ctx, input)
}

/**
 * Retrieves an agent the caller may see, with every relation (user, workspace, tools,
 * workflows, shares, categories, files).
 * @throws NotFoundError when it does not exist or the caller may not see it.
 */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<Envelope> {
  // Everything the answer depends on besides the data: who asks, in which workspace and role, in which scope.
  const key = `${uuid}:${ctx.auth.user.id}:${ctx.workspace.workspace.id}:${ctx.workspace.role}:${ctx.serviceId ?? ''}`
  return agentStore(ctx.deps.readCache).read(key, async () => ({ data: await retrieveAgent(ctx, uuid) }))
}

/**
 * Creates an agent owned by the caller in the request's workspace (docs/api/resources.md). Every
 * reference is checked before the one transaction that writes the agent and its bindings.
 * @throws ValidationError naming the field of an unusable photo, tool, account, workflow, file
 *   or category.
 */
export async function create(ctx: ResourceCtx, input: TCreateAgentInput): Promise<Envelope> {
  const photoKey = await resolveProfilePhotoKey(ctx, input.profile_photo_key)
  const links = await resolveAgentLinks(ctx, input)
  const created = await ctx.em.transactional(async (em) => {
    const agent = em.create(Agent, {
      name: input.name,
      description: input.description ?? '',
      instruction: input.instruction ?? '',
      visibility: input.visibility ?? 'private',
      profilePhotoKey: photoKey ?? null,
      profilePhotoConfig: input.profile_photo_config ?? null,
      metadata: input.metadata ?? {},
      isTemplate: input.is_template ?? false,
      user: ctx.auth.user.id,
      workspace: ctx.workspace.workspace.id,
    })
    await em.flush()
    for (const pivot of agentPivotRows(links))
      await replacePivotRows(em, pivot.table, 'agent_id', agent.id, pivot.columns, pivot.rows, pivot)
    await recordVersion(em, agent.id, ctx.auth.user.id, null)
    await audit(em, ctx, {
      action: 'agent.create',
      resource: { type: 'agent', uuid: agent.uuid },
      changes: fieldChanges(null, auditedFields(agent)),
    })
    const trained = input.file
      ? await syncAgentFiles(em, ctx, { id: agent.id, workspaceId: ctx.workspace.workspace.id }, input.file.keys)
      : []
    return { id: agent.id, trained }
  })
  await queueTrainedFiles(ctx, created.trained)
  return { data: await loadAgent(ctx, created.id) }
}

/**
 * `PUT /api/v1/agents/{agent_uuid}` (specification: "Update an Agent"; docs/api/resources.md):
 * omitted fields are kept, `null` clears `description`/`instruction` (to `''`),
 * `profile_photo_key` and `profile_photo_config`; `metadata` merges key by key (`null` removes a
 * key); `tools`, `workflows`, `file.keys` and `category_uuids` replace the whole set. Every
 * reference is checked before writing, and the writes run in one transaction, so a failed
 * update changes nothing.
 * @throws NotFoundError (not visible), ForbiddenError (visible without `write`), ValidationError
 *   (an unusable reference, `metadata` over 64 KiB after merging).
 */
export async function update(ctx: ResourceCtx, input: TUpdateAgentInput): Promise<Envelope> {
  const access = await requireResource(ctx, 'agents', 'Agent', input.agent_uuid, 'write')
  const photoKey = await resolveProfilePhotoKey(ctx, input.profile_photo_key)
  const links = await resolveAgentLinks(ctx, input)
  return writeAgent(ctx, access, { ...input, profile_photo_key: photoKey }, links, null, 'agent.update')
}

/** An agent's fields as the audit log records them (docs/api/audit.md): its own, not its bindings. */
export function auditedFields(agent: IAgent): Record<string, unknown> {
  return {
    name: agent.name,
    description: agent.description,
    instruction: agent.instruction,
    visibility: agent.visibility,
    profile_photo_key: agent.profilePhotoKey ?? null,
    profile_photo_config: agent.profilePhotoConfig ?? null,
    metadata: agent.metadata,
    is_template: agent.isTemplate,
  }
}

/** An update's fields with the photo key resolved, or a restore's (`metadata` then replaces the stored one). */
type AgentWrite = Omit<TUpdateAgentInput, 'agent_uuid' | 'profile_photo_key' | 'metadata' | 'profile_photo_config'> & {
  profile_photo_key?: string | null
  metadata?: Record<string, unknown>
  replaceMetadata?: boolean
  profile_photo_config?: ProfilePhotoConfigValue | null
}

/**
 * The one transaction of an update or a restore: the agent locked, its fields and bindings written,
 * then its next version recorded when a behaviour field changed (./agent-versions.ts), with `note`.
 */
async function writeAgent(
  ctx: ResourceCtx,
  access: ResourceAccess,
  input: AgentWrite,
  links: AgentLinks,
  note: string | null,
  action: 'agent.update' | 'agent.restore',
): Promise<Envelope> {
  const trained = await ctx.em.transactional(async (em) => {
    // Locked, so two concurrent metadata merges cannot lose each other's keys, and versions are numbered one after the other.
    const agent = await em.findOneOrFail(Agent, access.id, { lockMode: LockMode.PESSIMISTIC_WRITE })
    const before = auditedFields(agent)
    if (input.metadata !== undefined) {
      const merged = input.replaceMetadata ? input.metadata : mergeMetadata(agent.metadata, input.metadata)
      if (jsonBytes(merged) > AGENT_METADATA_MAX_BYTES) {
        throw new ValidationError(['metadata'], `metadata must not exceed ${AGENT_METADATA_MAX_BYTES} bytes as JSON after merging`)
      }
      agent.metadata = merged
    }
    if (input.name !== undefined) agent.name = input.name
    if (input.description !== undefined) agent.description = input.description ?? ''
    if (input.instruction !== undefined) agent.instruction = input.instruction ?? ''
    if (input.visibility !== undefined) agent.visibility = input.visibility
    if (input.profile_photo_key !== undefined) agent.profilePhotoKey = input.profile_photo_key
    if (input.profile_photo_config !== undefined) agent.profilePhotoConfig = input.profile_photo_config
    if (input.is_template !== undefined) agent.isTemplate = input.is_template
    // A PUT is an update even when it only replaces bindings.
    agent.updatedAt = new Date()
    await em.flush()
    for (const pivot of agentPivotRows(links))
      await replacePivotRows(em, pivot.table, 'agent_id', access.id, pivot.columns, pivot.rows, pivot)
    await recordVersion(em, access.id, ctx.auth.user.id, note)
    await audit(em, ctx, { action, resource: { type: 'agent', uuid: access.uuid }, changes: fieldChanges(before, auditedFields(agent)) })
    // `file.keys` trains the files it names and untrains those it no longer names (docs/api/knowledge.md).
    return input.file
      ? syncAgentFiles(em, ctx, { id: access.id, workspaceId: access.workspaceId ?? ctx.workspace.workspace.id }, input.file.keys)
      : []
  })
  await queueTrainedFiles(ctx, trained)
  return { data: await loadAgent(ctx, access.id) }
}

/**
 * `POST /api/v1/agents/{agent_uuid}/versions/{version}/restore` (docs/api/versions.md): the agent's
 * behaviour fields become version `version`'s snapshot (metadata replaced, not merged), recorded as
 * a new version noted `restored from version <n>`; a restore that changes nothing makes none.
 * @throws NotFoundError (agent not visible, or no such version), ForbiddenError (no `write`),
 *   ValidationError naming `snapshot.tools.<i>` / `snapshot.workflows.<i>` for a tool, account or
 *   workflow of the snapshot the caller can no longer use (nothing changed).
 */
export async function restore(ctx: ResourceCtx, input: TAgentVersionPathInput): Promise<Envelope> {
  const access = await requireResource(ctx, 'agents', 'Agent', input.agent_uuid, 'write')
  const snapshot = await versionSnapshot(ctx, access.id, input.version)
  let links: AgentLinks
  try {
    links = await resolveAgentLinks(ctx, { tools: snapshot.tools, workflows: snapshot.workflows })
  } catch (error) {
    // The snapshot's entries are named where the caller reads them: `snapshot.tools.<i>`.
    if (error instanceof ValidationError && (error.issues[0]?.path[0] === 'tools' || error.issues[0]?.path[0] === 'workflows')) {
      const [field, index] = error.issues[0].path
      throw new ValidationError(['snapshot', field, index], `${error.message} (version ${input.version})`)
    }
    throw error
  }
  const write: AgentWrite = {
    name: snapshot.name,
    description: snapshot.description,
    instruction: snapshot.instruction,
    metadata: snapshot.metadata,
    replaceMetadata: true,
    profile_photo_config: snapshot.profile_photo_config,
  }
  return writeAgent(ctx, access, write, links, `restored from version ${input.version}`, 'agent.restore')
}

/**
 * Soft-deletes an agent (`deleted_at`); needs `admin` permission (docs/api/tenancy.md).
 * @throws NotFoundError (not visible), ForbiddenError (visible without `admin`).
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const access = await requireResource(ctx, 'agents', 'Agent', uuid, 'admin')
  await ctx.em.transactional(async (em) => {
    await em.execute('update agents set deleted_at = now(), updated_at = now() where id = ? and deleted_at is null', [access.id])
    // Its knowledge goes with it, chunks included, even while a document is being ingested.
    await removeAgentKnowledge(em, access.id)
    await audit(em, ctx, { action: 'agent.delete', resource: { type: 'agent', uuid: access.uuid } })
  })
}

/**
 * `POST /api/v1/agents/{agent_uuid}/share`: sets (or, with `permission: null`, removes) the
 * share of the agent with a user (`entity_id` a user id of the caller's service scope) or a
 * workspace (`entity_id` the uuid of a workspace the caller belongs to). Needs `admin`; the
 * rules are those of {@link shareResource}.
 * @throws NotFoundError, ForbiddenError; ValidationError naming `entity_id` for an unknown
 *   user, a workspace the caller is not a member of, or the agent's owner.
 */
export async function share(ctx: ResourceCtx, input: TShareAgentInput): Promise<Envelope> {
  const access = await requireResource(ctx, 'agents', 'Agent', input.agent_uuid, 'admin')
  await shareResource(ctx, 'agents', access, input)
  return { data: await loadAgent(ctx, access.id) }
}

/** `POST /api/v1/agents/{agent_uuid}/favorite`: idempotent; needs `read`. */
export async function favorite(ctx: ResourceCtx, uuid: string): Promise<void> {
  const access = await requireResource(ctx, 'agents', 'Agent', uuid, 'read')
  await addFavorite(ctx, 'agents', access)
}

/** `DELETE /api/v1/agents/{agent_uuid}/favorite`: idempotent; needs `read`. */
export async function unfavorite(ctx: ResourceCtx, uuid: string): Promise<void> {
  const access = await requireResource(ctx, 'agents', 'Agent', uuid, 'read')
  await removeFavorite(ctx, 'agents', access)
}
