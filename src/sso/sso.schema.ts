/** Wire shapes of single sign-on (docs/api/sso.md). */
import { z } from 'zod'
import { envelope, text } from '../access/wire.ts'
import { CONSOLE_PATH_MAX } from './console-path.ts'

/** `GET /api/v1/auth/providers`: how a person may sign in here. */
export const AuthProvidersResponse = envelope(
  z
    .object({
      password: z.boolean().describe('Whether `POST /api/v1/auth/sign-in` accepts e-mail and password (PASSWORD_SIGN_IN).'),
      oidc: z
        .object({ name: z.string().describe('The label of the sign-in button (OIDC_NAME).') })
        .nullable()
        .describe('The OpenID Connect provider, or null when single sign-on is not configured.'),
    })
    .meta({ id: 'AuthProviders' }),
)
export type TAuthProvidersResponse = z.infer<typeof AuthProvidersResponse>

/** `GET /api/v1/auth/oidc`'s query. */
export const OidcStartQuery = z.strictObject({
  redirect: z
    .string()
    .max(CONSOLE_PATH_MAX)
    .optional()
    .describe('The console path to return to with the one-time code (default `/console/sign-in`); must start with `/console`.'),
})

/** `GET /api/v1/auth/oidc/callback`'s query as the provider sends it (other parameters are passed on to the checks). */
export const OidcCallbackQuery = z.object({
  code: z.string().optional().describe('The authorization code.'),
  state: z.string().describe('The state of the sign-in, as sent to the provider.'),
  error: z.string().optional().describe("The provider's error code, instead of a code (`access_denied`, ...)."),
  iss: z.string().optional().describe("The provider's issuer (RFC 9207), checked when the provider sends it."),
})

/** `POST /api/v1/auth/oidc/token`. */
export const OidcTokenInput = z.strictObject({
  code: text(200, 1).describe('The one-time code the callback gave the console (`?code=`); valid 60 seconds, once.'),
})
export type TOidcTokenInput = z.infer<typeof OidcTokenInput>
