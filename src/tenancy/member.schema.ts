/** Workspace member wire shapes (docs/api/tenancy.md). */
import { z } from 'zod'
import { WORKSPACE_ROLES } from '../../entities/index.ts'
import { NestedUser } from '../access/user-workspace.schema.ts'
import { envelope, jsonInt, paginated, pageQuery, timestamp } from '../access/wire.ts'

export const Member = z
  .object({ user: NestedUser, role: z.enum(WORKSPACE_ROLES), created_at: timestamp(), updated_at: timestamp() })
  .meta({ id: 'WorkspaceMember' })

export const MemberResponse = envelope(Member)
export const MemberList = paginated(Member)
export const MemberListInput = z.strictObject({ workspace_uuid: z.uuid(), ...pageQuery })

/** Add a member: exactly one of `email` or `user_id`. */
export const AddMemberInput = z
  .strictObject({
    workspace_uuid: z.uuid(),
    email: z.email().max(320).optional(),
    user_id: jsonInt(1, 2_147_483_647).optional(),
    role: z.enum(WORKSPACE_ROLES).default('member'),
  })
  .superRefine((value, ctx) => {
    if ((value.email === undefined) === (value.user_id === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['email'], message: 'give exactly one of email or user_id' })
    }
  })

/** `user_id` in the path: the REST layer coerces the text to a number. */
const PathUserId = z.number().int().min(1).max(2_147_483_647)

export const UpdateMemberInput = z.strictObject({
  workspace_uuid: z.uuid(),
  user_id: PathUserId,
  role: z.enum(WORKSPACE_ROLES),
})
export const MemberPathInput = z.strictObject({
  workspace_uuid: z.uuid(),
  user_id: PathUserId,
})
