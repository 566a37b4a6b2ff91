/**
 * Workflows as stored resources (specification: "Workflow"; docs/api/tenancy.md, docs/api/resources.md and docs/api/workflows.md): list, create, retrieve, update, soft delete, favourites. Every function
 * starts with its access check; visibility and shares run in SQL (src/access). The graph is
 * checked on every save (src/workflows/graph.ts); the webhook secret is sealed like
 * account secrets; after every save the workflow's schedule is brought in line with it
 * (src/workflows/engine.ts). Running: workflow-runs.service.ts, webhooks.service.ts.
 */
import { LockMode } from '@mikro-orm/core'
import { uuidv7 } from 'uuidv7'
import { Workflow, type IWorkflow } from '../../entities/index.ts'
import { audit, entityFields, fieldChanges } from '../access/audit.ts'
import { requireResource } from '../access/resource-access.ts'
import { queries, type Em } from '../platform/db.ts'
import { ValidationError } from '../platform/errors.ts'
import type { TCreateWorkflowInput, TListWorkflowsInput, TUpdateWorkflowInput, TWorkflow } from './workflow.schema.ts'
import { jsonBytes, page } from '../access/wire.ts'
import { MAX_GRAPH_BYTES } from './workflow-graph.schema.ts'
import { validateGraph, type GraphIssue } from './graph.ts'
import { setCategories } from '../access/categories.ts'
import { keyringOf, seal, type Keyring } from '../platform/secrets.ts'
import { webhookSecretContext } from './webhooks.service.ts'
import { addFavorite, removeFavorite } from '../access/favorites.ts'
import { resolveProfilePhotoKey } from '../access/references.ts'
import { resourceFilterQuery } from '../access/list-filters.ts'
import { listWorkflows, loadWorkflow } from './workflows.query.ts'
import type { ResourceCtx } from '../context.ts'
import { resolveCategoryUuids } from '../access/references.ts'

const LABEL = 'Workflow'
/** Most graph issues one 400 lists. */
const MAX_ISSUES = 20

/**
 * The sealed columns of a webhook secret (both null without one). The context is the workflow's
 * uuid, so a ciphertext copied to another row does not open.
 */
function webhookSecretColumns(keyring: Keyring, uuid: string, secret: string | null) {
  if (secret === null) return { webhookSecretCiphertext: null, webhookSecretKeyId: null }
  const sealed = seal(keyring, secret, webhookSecretContext(uuid))
  return { webhookSecretCiphertext: sealed.ciphertext, webhookSecretKeyId: sealed.keyId }
}

/** Throws the graph's problems as one 400 naming each node or edge. */
function assertGraph(issues: GraphIssue[]): void {
  if (!issues.length) return
  const error = new ValidationError(issues[0].path, issues[0].message)
  for (const issue of issues.slice(1, MAX_ISSUES)) error.issues.push({ code: 'custom', ...issue })
  throw error
}

/**
 * `GET /api/v1/workflows`: the paginator shape over the workflows the caller may list in the
 * request's workspace (docs/api/tenancy.md), with the specification's filters. A constant number
 * of queries whatever the page size.
 */
export async function list(ctx: ResourceCtx, input: TListWorkflowsInput) {
  const { items, total } = await listWorkflows(ctx, input)
  return page(items, {
    total,
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}/api/v1/workflows`,
    query: {
      sort: input.sort,
      with: input.with?.join(','),
      ...resourceFilterQuery(input),
    },
  })
}

/** `GET /api/v1/workflows/{workflow_uuid}`. @throws NotFoundError when the caller may not see it. */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TWorkflow }> {
  const { id } = await requireResource(ctx, 'workflows', LABEL, uuid, 'read')
  return { data: await loadWorkflow(ctx, id) }
}

/**
 * The graph checks of a save (./graph.ts `validateGraph`) as one 400 naming each node or edge
 * (`nodes.2.parameters.url`). Also run by an agent import (src/agents/agent-portable.service.ts)
 * before anything is written.
 * @throws ValidationError listing the graph's problems.
 */
export function checkGraph(nodes: readonly unknown[], edges: readonly unknown[]): void {
  assertGraph(validateGraph(nodes, edges))
}

/** A create body without the workspace context and the categories the caller resolved already. */
export type NewWorkflowInput = Omit<TCreateWorkflowInput, 'workspace_uuid' | 'category_uuids'>

/**
 * Writes a new workflow owned by the caller in the request's workspace with `em` (a transaction,
 * which may write more: an agent import), with the create's defaults, its webhook secret sealed
 * and its categories set; answers its id. The graph was checked ({@link checkGraph}) and the
 * references resolved by the caller; its schedule is synced once the transaction committed.
 */
export async function insertWorkflow(em: Em, ctx: ResourceCtx, input: NewWorkflowInput, categoryIds: number[]): Promise<number> {
  return (await newWorkflow(em, ctx, input, categoryIds)).id
}

/** {@link insertWorkflow}, answering the workflow written. */
async function newWorkflow(em: Em, ctx: ResourceCtx, input: NewWorkflowInput, categoryIds: number[]): Promise<IWorkflow> {
  // The uuid is made here (not at flush) because the webhook secret is sealed with it.
  const uuid = uuidv7()
  const workflow = em.create(Workflow, {
    uuid,
    name: input.name,
    description: input.description ?? '',
    profilePhotoKey: input.profile_photo_key ?? null,
    profilePhotoConfig: input.profile_photo_config ?? null,
    visibility: input.visibility ?? 'private',
    isActive: input.is_active ?? false,
    isTemplate: input.is_template ?? false,
    nodes: input.nodes ?? [],
    edges: input.edges ?? [],
    settings: input.settings ?? {},
    staticData: input.static_data ?? {},
    pinData: input.pin_data ?? {},
    triggerCount: 0,
    user: ctx.auth.user.id,
    workspace: ctx.workspace.workspace.id,
    ...webhookSecretColumns(keyringOf(ctx.config), uuid, input.webhook_secret ?? null),
  })
  await em.flush()
  await setCategories(em, 'workflows', workflow.id, categoryIds)
  return workflow
}

/** A workflow's fields the audit log records (docs/api/audit.md), besides its webhook secret. */
const AUDITED = [
  'name',
  'description',
  'profilePhotoKey',
  'profilePhotoConfig',
  'visibility',
  'isActive',
  'isTemplate',
  'nodes',
  'edges',
  'settings',
  'staticData',
  'pinData',
] as const

/**
 * A workflow's fields as the audit log records them. The webhook secret is given as its
 * ciphertext, under `webhook_secret`: the log redacts it, and a new secret differs from the old
 * one (each seal is random), so setting, replacing and removing it each show.
 */
const auditedFields = (workflow: IWorkflow): Record<string, unknown> => ({
  ...entityFields(workflow, AUDITED),
  webhook_secret: workflow.webhookSecretCiphertext ?? null,
})

/**
 * `POST /api/v1/workflows`: a workflow of the request's workspace owned by the caller.
 * @throws ValidationError naming `profile_photo_key`, `category_uuids.N`, a node or an edge.
 */
export async function create(ctx: ResourceCtx, input: TCreateWorkflowInput): Promise<{ data: TWorkflow }> {
  checkGraph(input.nodes ?? [], input.edges ?? [])
  await resolveProfilePhotoKey(ctx, input.profile_photo_key)
  const categoryIds = await resolveCategoryUuids(ctx, input.category_uuids ?? [], ['category_uuids'])
  const id = await ctx.em.transactional(async (em) => {
    const workflow = await newWorkflow(em, ctx, input, categoryIds)
    await audit(em, ctx, {
      action: 'workflow.create',
      resource: { type: 'workflow', uuid: workflow.uuid },
      changes: fieldChanges(null, auditedFields(workflow)),
    })
    return workflow.id
  })
  await ctx.deps.workflows.syncSchedule(id)
  return { data: await loadWorkflow(ctx, id) }
}

/**
 * Applies a PUT to a locked row: omitted fields kept, `null` clears, lists and the graph objects
 * replaced whole. The merged graph is checked before anything is written (a throw here rolls the
 * transaction back and discards the assigned values); the update is recorded with its fields'
 * changes (docs/api/audit.md).
 */
async function applyUpdate(
  em: Em,
  ctx: ResourceCtx,
  id: number,
  input: TUpdateWorkflowInput,
  categoryIds: number[] | undefined,
): Promise<void> {
  const workflow = await em.findOneOrFail(Workflow, id, { lockMode: LockMode.PESSIMISTIC_WRITE, populate: ['webhookSecretCiphertext'] })
  const before = auditedFields(workflow)
  em.assign(
    workflow,
    {
      name: input.name,
      description: input.description,
      profilePhotoKey: input.profile_photo_key,
      profilePhotoConfig: input.profile_photo_config,
      visibility: input.visibility,
      isActive: input.is_active,
      isTemplate: input.is_template,
      nodes: input.nodes,
      edges: input.edges,
      settings: input.settings,
      staticData: input.static_data,
      pinData: input.pin_data,
      // A PUT is an update even when it only replaces the categories.
      updatedAt: new Date(),
    },
    { ignoreUndefined: true, mergeObjectProperties: false },
  )
  if (input.webhook_secret !== undefined) {
    em.assign(workflow, webhookSecretColumns(keyringOf(ctx.config), workflow.uuid, input.webhook_secret))
  }
  const { nodes, edges, settings, staticData, pinData } = workflow
  if (input.nodes !== undefined || input.edges !== undefined) assertGraph(validateGraph(nodes, edges))
  if (jsonBytes({ nodes, edges, settings, static_data: staticData, pin_data: pinData }) > MAX_GRAPH_BYTES) {
    throw new ValidationError([], `The workflow graph is larger than ${MAX_GRAPH_BYTES} bytes`)
  }
  await em.flush()
  if (categoryIds !== undefined) await setCategories(em, 'workflows', id, categoryIds)
  await audit(em, ctx, {
    action: 'workflow.update',
    resource: { type: 'workflow', uuid: workflow.uuid },
    changes: fieldChanges(before, auditedFields(workflow)),
  })
}

/**
 * `PUT /api/v1/workflows/{workflow_uuid}` (docs/api/resources.md semantics), in one transaction.
 * @throws NotFoundError (not visible), ForbiddenError (less than `write`), ValidationError.
 */
export async function update(ctx: ResourceCtx, input: TUpdateWorkflowInput): Promise<{ data: TWorkflow }> {
  const { id } = await requireResource(ctx, 'workflows', LABEL, input.workflow_uuid, 'write')
  await resolveProfilePhotoKey(ctx, input.profile_photo_key)
  const categoryIds =
    input.category_uuids === undefined ? undefined : await resolveCategoryUuids(ctx, input.category_uuids, ['category_uuids'])
  await ctx.em.transactional((em) => applyUpdate(em, ctx, id, input, categoryIds))
  await ctx.deps.workflows.syncSchedule(id)
  return { data: await loadWorkflow(ctx, id) }
}

/** `DELETE /api/v1/workflows/{workflow_uuid}`: soft delete. @throws ForbiddenError below `admin`. */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const { id, uuid: workflowUuid } = await requireResource(ctx, 'workflows', LABEL, uuid, 'admin')
  await ctx.em.transactional(async (em) => {
    const deleted = await queries(em)
      .updateTable('workflows')
      .set((eb) => ({ deleted_at: eb.fn('now'), updated_at: eb.fn('now') }))
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .returning('id')
      .execute()
    if (deleted.length > 0) await audit(em, ctx, { action: 'workflow.delete', resource: { type: 'workflow', uuid: workflowUuid } })
  })
  await ctx.deps.workflows.syncSchedule(id)
}

/** `POST /api/v1/workflows/{workflow_uuid}/favorite`: idempotent. */
export async function favorite(ctx: ResourceCtx, uuid: string): Promise<void> {
  await addFavorite(ctx, 'workflows', await requireResource(ctx, 'workflows', LABEL, uuid, 'read'))
}

/** `DELETE /api/v1/workflows/{workflow_uuid}/favorite`: idempotent. */
export async function unfavorite(ctx: ResourceCtx, uuid: string): Promise<void> {
  await removeFavorite(ctx, 'workflows', await requireResource(ctx, 'workflows', LABEL, uuid, 'read'))
}
