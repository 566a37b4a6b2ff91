/**
 * The body of every `POST /api/v1/<resources>/{uuid}/share` (docs/api/tenancy.md, "Shares"): the
 * fields and the cross-field check each resource's share input is built from, so agents and
 * workflows refuse the same things in the same words.
 */
import { z } from 'zod'
import { SHARE_ENTITY_TYPES, SHARE_PERMISSIONS } from '../../entities/index.ts'
import { jsonInt } from './wire.ts'

/**
 * The share fields after the resource's path parameter: the optional workspace context,
 * `entity_type` (`user` or `workspace`), `entity_id` (a user id, an integer, for `user`; a
 * workspace uuid for `workspace`) and `permission` (`read`, `write`, `admin`; `null` removes
 * the share).
 */
export const shareFields = {
  workspace_uuid: z.uuid().optional(),
  entity_type: z.enum(SHARE_ENTITY_TYPES),
  entity_id: z.union([jsonInt(1, 2_147_483_647), z.uuid()]),
  permission: z.enum(SHARE_PERMISSIONS).nullable(),
}

/** What a share request carries besides the resource's path parameter. */
export type TShareRequest = z.infer<z.ZodObject<typeof shareFields>>

/** Adds an issue naming `entity_id` when its kind does not match `entity_type`. */
export function checkShareEntity(value: { entity_type?: unknown; entity_id?: unknown }, ctx: z.RefinementCtx): void {
  if (value.entity_type === 'user' && typeof value.entity_id !== 'number') {
    ctx.addIssue({ code: 'custom', path: ['entity_id'], message: 'a user id (integer) for entity_type "user"' })
  }
  if (value.entity_type === 'workspace' && typeof value.entity_id !== 'string') {
    ctx.addIssue({ code: 'custom', path: ['entity_id'], message: 'a workspace uuid for entity_type "workspace"' })
  }
}

/**
 * The strict share input of a resource: its path parameter (`{agent_uuid: z.uuid()}`) first,
 * then {@link shareFields}, checked by {@link checkShareEntity}.
 */
export function shareInput<const P extends Record<string, z.ZodUUID>>(path: P) {
  return z.strictObject({ ...path, ...shareFields }).superRefine(checkShareEntity)
}
