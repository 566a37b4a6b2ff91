/**
 * User and Workspace wire shapes (specification: "User", "Workspace"), the row -> wire mappers and
 * the workspace request shapes. The two nest each other with the shallow nesting of
 * docs/api/conventions.md (a nested user's `primary_workspace` and a nested workspace's `user` are
 * null, never recursive), so they are one module, as their entities are
 * (entities/user-workspace.entity.ts).
 */
import { z } from 'zod'
import { iso, jsonBoolean, jsonInt, name, text, timestamp } from './wire.ts'
import type { UserRow, WorkspaceRow } from '../context.ts'

export type { UserRow, WorkspaceRow }

const AiTool = z.strictObject({ emoji: text(64), name: text(255), description: text(2000) })
const AiTools = z.strictObject({
  agents: z.array(AiTool).max(100).optional(),
  prompts: z.array(AiTool).max(100).optional(),
  workflows: z.array(AiTool).max(100).optional(),
})
const metadataFields = {
  onboarding_step: jsonInt(0, 1000),
  sources: z.array(text(255)).max(100),
  affiliate_name: text(255),
  role: text(255),
  industry: text(255),
  tools: z.array(text(255)).max(100),
  ai_tools: AiTools,
}
/** Most keys a workspace's `metadata` holds, on create and after an update's merge. */
export const METADATA_MAX_KEYS = 100
const extraKey = z.string().min(1).max(64).regex(/^[A-Za-z0-9_.-]+$/, 'metadata keys are letters, digits and "_.-"')

/** Extra keys are well-formed, and there are at most {@link METADATA_MAX_KEYS} keys. */
function checkMetadataKeys(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const keys = Object.keys(value)
  for (const key of keys) {
    if (!(key in metadataFields) && !extraKey.safeParse(key).success) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'metadata keys are 1..64 letters, digits and "_.-"' })
    }
  }
  if (keys.length > METADATA_MAX_KEYS) ctx.addIssue({ code: 'custom', path: [], message: `at most ${METADATA_MAX_KEYS} keys` })
}

/** Workspace `metadata` on create: the named fields plus extra string keys. */
export const WorkspaceMetadataInput = z
  .object(Object.fromEntries(Object.entries(metadataFields).map(([key, schema]) => [key, schema.optional()])))
  .catchall(text(10_000))
  .superRefine(checkMetadataKeys)

/** Workspace `metadata` on update: as on create, and `null` removes a key. */
export const WorkspaceMetadataPatch = z
  .object(Object.fromEntries(Object.entries(metadataFields).map(([key, schema]) => [key, schema.nullable().optional()])))
  .catchall(text(10_000).nullable())
  .superRefine(checkMetadataKeys)

const AiToolOut = z.object({ emoji: z.string(), name: z.string(), description: z.string() })
/** Workspace `metadata` as answered. */
export const WorkspaceMetadata = z
  .object({
    onboarding_step: z.number().int().optional(),
    sources: z.array(z.string()).optional(),
    affiliate_name: z.string().optional(),
    role: z.string().optional(),
    industry: z.string().optional(),
    tools: z.array(z.string()).optional(),
    ai_tools: z
      .object({
        agents: z.array(AiToolOut).optional(),
        prompts: z.array(AiToolOut).optional(),
        workflows: z.array(AiToolOut).optional(),
      })
      .optional(),
  })
  .catchall(z.string())

/** A slug: lower-case letters, digits and single hyphens. */
export const Slug = z
  .string()
  .min(1)
  .max(80)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lower-case letters, digits and single hyphens')

/** Fields every workspace shape has; `user` differs by nesting depth. */
export const WorkspaceBase = z.object({
  uuid: z.uuid(),
  slug: z.string(),
  name: z.string(),
  profile_photo_url: z.string().nullable(),
  service_id: z.string().nullable(),
  is_onboarded: z.boolean(),
  metadata: WorkspaceMetadata,
  is_owner: z.boolean(),
  created_at: timestamp(),
  updated_at: timestamp(),
})

/** Create input body. */
export const CreateWorkspaceInput = z.strictObject({
  name: name(),
  slug: Slug.optional(),
  profile_photo_key: text(512).optional(),
  is_onboarded: jsonBoolean().optional(),
  metadata: WorkspaceMetadataInput.optional(),
})

/** Update input: path uuid plus the body; omitted fields are kept, `null` clears. */
export const UpdateWorkspaceInput = z.strictObject({
  workspace_uuid: z.uuid(),
  name: name().optional(),
  slug: Slug.optional(),
  profile_photo_key: text(512).nullable().optional(),
  is_onboarded: jsonBoolean().optional(),
  metadata: WorkspaceMetadataPatch.optional(),
})

/** URL of a stored media key (served by the media route). */
export function mediaUrl(appUrl: string, key: string | null): string | null {
  return key ? `${appUrl}/api/v1/media/${encodeURIComponent(key)}` : null
}

/** Row -> wire fields common to every nesting depth. */
export function toWorkspaceBase(row: WorkspaceRow, viewerId: number, appUrl: string) {
  return {
    uuid: row.uuid,
    slug: row.slug,
    name: row.name,
    profile_photo_url: mediaUrl(appUrl, row.profilePhotoKey),
    service_id: row.serviceId,
    is_onboarded: row.isOnboarded,
    metadata: row.metadata as z.infer<typeof WorkspaceMetadata>,
    is_owner: row.userId === viewerId,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

const UserBase = z.object({
  id: z.number().int(),
  name: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.email(),
  profile_photo_url: z.string().nullable(),
  service_id: z.string().nullable(),
  created_at: timestamp(),
  updated_at: timestamp(),
})

/** A user nested in another resource: `primary_workspace` is null. */
export const NestedUser = UserBase.extend({ primary_workspace: z.null() }).meta({ id: 'NestedUser' })
/** A workspace nested in another resource: `user` is null. */
export const NestedWorkspace = WorkspaceBase.extend({ user: z.null() }).meta({ id: 'NestedWorkspace' })
/** A "User summary" (docs/api/conventions.md): `{id, name}`, as `decided_by` and `created_by` name a user. */
export const UserSummary = z.object({ id: z.number().int(), name: z.string() })
/** The User shape at the top level. */
export const User = UserBase.extend({ primary_workspace: NestedWorkspace.nullable() }).meta({ id: 'User' })
/** The Workspace shape at the top level (`user` null in lists unless `with=user`). */
export const Workspace = WorkspaceBase.extend({ user: NestedUser.nullable() }).meta({ id: 'Workspace' })

export type TUser = z.infer<typeof User>
export type TWorkspace = z.infer<typeof Workspace>

function toUserBase(row: UserRow, appUrl: string) {
  return {
    id: row.id,
    name: row.name,
    first_name: row.firstName,
    last_name: row.lastName,
    email: row.email,
    profile_photo_url: mediaUrl(appUrl, row.profilePhotoKey),
    service_id: row.serviceId,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

/** A user nested in another resource. */
export function toNestedUser(row: UserRow, appUrl: string): z.infer<typeof NestedUser> {
  return { ...toUserBase(row, appUrl), primary_workspace: null }
}

/** A user at the top level, with its primary workspace shallow. */
export function toUser(row: UserRow, primary: WorkspaceRow | null, viewerId: number, appUrl: string): TUser {
  return {
    ...toUserBase(row, appUrl),
    primary_workspace: primary ? { ...toWorkspaceBase(primary, viewerId, appUrl), user: null } : null,
  }
}

/** A workspace at the top level, with its owner shallow when given. */
export function toWorkspace(row: WorkspaceRow, owner: UserRow | null, viewerId: number, appUrl: string): TWorkspace {
  return { ...toWorkspaceBase(row, viewerId, appUrl), user: owner ? toNestedUser(owner, appUrl) : null }
}
