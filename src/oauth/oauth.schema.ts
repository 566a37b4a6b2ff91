/** Wire shapes of the OAuth consent (docs/api/mcp.md, "Authorization"). */
import { z } from 'zod'
import { envelope, jsonBoolean, text } from '../access/wire.ts'

/**
 * The fields of an authorization request (`GET /oauth/authorize`'s query), as the console passes
 * them on to the consent. Only their presence and length are checked here; what they must be
 * (a registered client and redirect URI, `code`, an S256 challenge, this server's resource) is
 * checked by the service, which names the field it refuses.
 */
export const authorizationFields = {
  client_id: text(64, 1).describe('The `client_id` of the registered client.'),
  redirect_uri: text(2048).optional().describe("One of the client's registered redirect URIs; may be left out when it has only one."),
  response_type: text(32, 1).describe('`code`.'),
  code_challenge: text(128, 1).describe('The PKCE challenge: base64url of the SHA-256 of the code verifier.'),
  code_challenge_method: text(16, 1).describe('`S256` (plain is refused).'),
  state: text(2048).optional().describe('Opaque to the server, returned with the code.'),
  scope: text(1024).optional().describe('Ignored: a token grants what its user may do in the chosen workspace.'),
  resource: text(2048).optional().describe('RFC 8707 resource indicator; when given, `<APP_URL>/mcp`.'),
}

/** `POST /api/v1/oauth/consent`: the authorization request, the workspace the user picked, and the decision. */
export const OAuthConsentInput = z.strictObject({
  ...authorizationFields,
  workspace_uuid: z.uuid().describe('The workspace the issued token is bound to; one the user is a member of (else 404).'),
  approve: jsonBoolean().describe('true to grant the client access, false to refuse it (the client gets `error=access_denied`).'),
})
/** The fields of {@link OAuthConsentInput} taken from the authorize query; others (`prompt`, extensions) are not passed on. */
export const AUTHORIZATION_FIELDS = Object.keys(authorizationFields) as (keyof typeof authorizationFields)[]
export type TOAuthConsentInput = z.infer<typeof OAuthConsentInput>

/** The consent's answer: where the console sends the browser. */
export const OAuthConsentResponse = envelope(
  z
    .object({
      redirect_uri: z
        .string()
        .describe("The client's redirect URI with `code` and `state` when approved, with `error=access_denied` and `state` when refused."),
    })
    .meta({ id: 'OAuthConsent' }),
)
export type TOAuthConsentResponse = z.infer<typeof OAuthConsentResponse>

/** `GET /api/v1/oauth/clients/{client_id}`. */
export const OAuthClientInput = z.strictObject({ client_id: text(64, 1).describe('The `client_id` of a registered client.') })

/** A registered client as the consent screen shows it. */
export const OAuthClientResponse = envelope(
  z
    .object({
      client_id: z.string(),
      client_name: z.string().nullable().describe('The name the client registered with, or null.'),
      client_uri: z.string().nullable().describe('The home page the client registered, or null.'),
      redirect_uris: z.array(z.string()).describe('Where the client may be sent back to.'),
      created_at: z.string().describe('When it registered (ISO 8601).'),
    })
    .meta({ id: 'OAuthClient' }),
)
export type TOAuthClientResponse = z.infer<typeof OAuthClientResponse>
