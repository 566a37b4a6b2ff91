/** Wire shapes of authentication, the current user and access tokens (docs/api/authentication.md). */
import { z } from 'zod'
import { TOKEN_ABILITIES } from '../../entities/index.ts'
import { User } from '../access/user-workspace.schema.ts'
import { envelope, name, paginated, pageQuery, text, timestamp } from '../access/wire.ts'

const Email = z.email().max(320)
/** Said in words a sign-up form can show as they are (zod's default is "Too small: expected string to have >=8 characters"). */
const Password = z.string().min(8, 'Must be at least 8 characters').max(256, 'Must be at most 256 characters')

export const SignUpInput = z.strictObject({
  name: name(),
  email: Email,
  password: Password,
  first_name: text(255).optional(),
  last_name: text(255).optional(),
})

export const SignInInput = z.strictObject({ email: Email, password: z.string().min(1).max(256) })

export const SignInResponse = envelope(
  z.object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_at: timestamp(),
    user: User,
  }),
)

export const UserResponse = envelope(User)

/** A token as listed: never the plaintext. */
export const AccessTokenView = z
  .object({
    uuid: z.uuid(),
    kind: z.enum(['basic', 'application']),
    name: z.string(),
    prefix: z.string(),
    abilities: z.array(z.enum(TOKEN_ABILITIES)),
    workspace_uuid: z.uuid().nullable(),
    expires_at: timestamp().nullable(),
    last_used_at: timestamp().nullable(),
    created_at: timestamp(),
  })
  .meta({ id: 'AccessToken' })

export const AccessTokenResponse = envelope(AccessTokenView)
export const AccessTokenList = paginated(AccessTokenView)
export const AccessTokenListInput = z.strictObject({ ...pageQuery }).prefault({})

export const CreateAccessTokenInput = z.strictObject({
  name: name(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
  workspace_uuid: z.uuid().optional(),
  abilities: z.array(z.enum(TOKEN_ABILITIES)).min(1).max(2).optional(),
})

/** Creation answers the plaintext once, as `access_token`. */
export const CreatedAccessTokenResponse = envelope(AccessTokenView.extend({ access_token: z.string() }))
export const AccessTokenUuidInput = z.strictObject({ token_uuid: z.uuid() })
