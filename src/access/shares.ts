/**
 * Shares of a resource (docs/api/tenancy.md, "Shares"): the one implementation behind
 * `POST /api/v1/agents/{agent_uuid}/share` and `POST /api/v1/workflows/{workflow_uuid}/share`.
 * A share grants a user (of the caller's service scope) or a workspace (one the caller belongs
 * to) `read`, `write` or `admin` on one row of `shares`, keyed by the resource's table and id;
 * the visibility rules of src/access read it in SQL.
 */
import { usersInScope, type ResourceAccess } from './resource-access.ts'
import { memberWorkspaceSql } from './workspace-access.ts'
import { ValidationError } from '../platform/errors.ts'
import type { TShareRequest } from './share.schema.ts'
import type { ResourceCtx } from '../context.ts'
import { queries } from '../platform/db.ts'
import { audit } from './audit.ts'
import { resourceType } from './resource-types.ts'

/** Tables whose rows can be shared through a share endpoint. */
export type ShareableTable = 'agents' | 'workflows'

/**
 * The id of the share's entity: a user of the caller's service scope other than the resource's
 * owner, or a workspace the caller belongs to.
 * @throws ValidationError naming `entity_id` otherwise.
 */
async function shareEntityId(ctx: ResourceCtx, input: TShareRequest, ownerId: number | null): Promise<number> {
  if (input.entity_type === 'user') {
    const userId = Number(input.entity_id)
    const user = await usersInScope(ctx).select('id').where('id', '=', userId).executeTakeFirst()
    if (!user) throw new ValidationError(['entity_id'], 'No user has this id')
    if (userId === ownerId) throw new ValidationError(['entity_id'], 'The owner already holds every permission')
    return userId
  }
  const scope = memberWorkspaceSql(ctx)
  const [workspace] = await ctx.em.execute(
    `select w.id::float8 as id from workspaces w ${scope.join} where ${scope.where} and w.uuid = ?`,
    [...scope.params, String(input.entity_id)],
  )
  if (!workspace) throw new ValidationError(['entity_id'], 'You are not a member of a workspace with this uuid')
  return Number(workspace.id)
}

/**
 * Sets the share of resource `access` (a row of `table`, already checked for `admin` by the
 * caller with `requireResource`) with `input`'s entity at `input.permission`, replacing an
 * existing share of that entity in place; `permission: null` removes it (a no-op when there is
 * none). Answers nothing: the caller reads the resource back in its own shape.
 * @throws ValidationError naming `entity_id` for an unknown user or one of another service
 *   scope, the resource's owner, or a workspace the caller is not a member of.
 */
export async function shareResource(
  ctx: ResourceCtx,
  table: ShareableTable,
  access: Pick<ResourceAccess, 'id' | 'uuid' | 'userId'>,
  input: TShareRequest,
): Promise<void> {
  const entityId = await shareEntityId(ctx, input, access.userId)
  const { entity_type: entityType, permission } = input
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    // The share as it was, for the audit event's change; locked, so two concurrent changes record one after the other.
    const before = await db
      .selectFrom('shares')
      .select('permission')
      .where('resource_type', '=', table)
      .where('resource_id', '=', access.id)
      .where('entity_type', '=', entityType)
      .where('entity_id', '=', entityId)
      .forUpdate()
      .executeTakeFirst()
    if (permission === null) {
      if (!before) return
      await db
        .deleteFrom('shares')
        .where('resource_type', '=', table)
        .where('resource_id', '=', access.id)
        .where('entity_type', '=', entityType)
        .where('entity_id', '=', entityId)
        .execute()
    } else {
      await db
        .insertInto('shares')
        .values((eb) => ({
          resource_type: table,
          resource_id: access.id,
          entity_type: entityType,
          entity_id: entityId,
          permission,
          created_at: eb.fn<Date>('now'),
          updated_at: eb.fn<Date>('now'),
        }))
        .onConflict((oc) =>
          oc
            .columns(['resource_type', 'resource_id', 'entity_type', 'entity_id'])
            .doUpdateSet((eb) => ({ permission: eb.ref('excluded.permission'), updated_at: eb.fn<Date>('now') })),
        )
        .execute()
    }
    // Setting the permission a share has already is no change to record.
    if (before?.permission === permission) return
    const type = resourceType(table)
    await audit(em, ctx, {
      action: `${type}.share`,
      resource: { type, uuid: access.uuid },
      changes: { [`shares.${entityType}.${String(input.entity_id)}`]: { from: before?.permission ?? null, to: permission } },
    })
  })
}
