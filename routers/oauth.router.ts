/**
 * The consent of the OAuth authorization server (docs/api/mcp.md, "Authorization"): the console's
 * consent screen reads the client and posts the signed-in user's decision. The protocol's own
 * endpoints (`/oauth/*`, `/.well-known/*`) speak OAuth, not this API: plain routes,
 * src/http/oauth.routes.ts.
 */
import { OAuthClientInput, OAuthClientResponse, OAuthConsentInput, OAuthConsentResponse, oauth } from '../src/oauth/index.ts'
import { authedProcedure, router } from '../src/trpc/init.ts'

export const oauthRouter = router({
  client: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/oauth/clients/{client_id}',
        tags: ['Authentication'],
        summary: 'A client registered for OAuth, as the consent screen shows it',
        description: 'The name, home page and redirect URIs an MCP client registered with (`POST /oauth/register`). 404 for an unknown client.',
        protect: true,
      },
    })
    .input(OAuthClientInput)
    .output(OAuthClientResponse)
    .query(({ ctx, input }) => oauth.client(ctx, input.client_id)),

  consent: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/oauth/consent',
        tags: ['Authentication'],
        summary: "Approve or refuse an MCP client's authorization request",
        description:
          "The console's consent screen sends the signed-in user's decision on the query of `GET /oauth/authorize`, with the " +
          'workspace the token is bound to. The request is checked again (a registered `client_id` and `redirect_uri`, ' +
          '`response_type=code`, an S256 `code_challenge`, `resource` `<APP_URL>/mcp` when given): a 400 names the field. ' +
          "Answers the client's redirect URI with `code` (valid 60 seconds, once) and `state`, or with `error=access_denied`. " +
          'Takes a sign-in (basic) token: 403 for an application token; 404 for a workspace the user is not a member of.',
        protect: true,
      },
    })
    .input(OAuthConsentInput)
    .output(OAuthConsentResponse)
    .mutation(({ ctx, input }) => oauth.consent(ctx, input)),
})
