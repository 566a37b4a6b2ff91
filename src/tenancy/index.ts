/**
 * The tenancy capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/tenancy/ (docs/architecture.md, "Rules").
 */
export * as tokens from './access-tokens.service.ts'
export { AccessTokenList, AccessTokenListInput, AccessTokenResponse, AccessTokenUuidInput, CreateAccessTokenInput, CreatedAccessTokenResponse, SignInInput, SignInResponse, SignUpInput, UserResponse } from './auth.schema.ts'
export * as auth from './auth.service.ts'
export { authenticate } from './auth.service.ts'
export { AddMemberInput, MemberList, MemberListInput, MemberPathInput, MemberResponse, UpdateMemberInput } from './member.schema.ts'
export * as members from './members.service.ts'
export * as users from './users.service.ts'
export * as workspaces from './workspaces.service.ts'
