/** Every entity, in one list for the ORM (STYLE.md, "Layout"). */
import { AccessToken } from './access-token.entity.ts'
import { Share } from './share.entity.ts'
import { User } from './user.entity.ts'
import { WorkspaceMember } from './workspace-member.entity.ts'
import { Workspace } from './workspace.entity.ts'

export { AccessToken, Share, User, Workspace, WorkspaceMember }
export * from './access-token.entity.ts'
export * from './share.entity.ts'
export * from './user.entity.ts'
export * from './workspace-member.entity.ts'
export * from './workspace.entity.ts'

export const entities = [User, Workspace, WorkspaceMember, AccessToken, Share]
