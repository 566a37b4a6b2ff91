/**
 * User and Workspace response shapes (specification: "User", "Workspace") with the shallow
 * nesting of docs/api/conventions.md: a nested user's `primary_workspace` and a nested workspace's
 * `user` are null, never recursive.
 */
import { z } from 'zod'
import { iso, timestamp } from './wire.ts'
import { WorkspaceBase, mediaUrl, toWorkspaceBase, type WorkspaceRow } from './workspace.schema.ts'

/** The columns a user mapper needs (camelCase aliases of `users`). */
export interface UserRow {
  id: number
  name: string
  firstName: string
  lastName: string
  email: string
  profilePhotoKey: string | null
  serviceId: string | null
  createdAt: Date | string
  updatedAt: Date | string
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
