/**
 * MCP authorization (docs/api/mcp.md, "Authorization"): the OAuth 2.1 flow an OAuth-only MCP
 * client runs against the service, through the official SDK's own client (`auth()` of
 * `@modelcontextprotocol/sdk/client/auth.js` behind its Streamable HTTP transport): discovery
 * from `/mcp`'s 401, dynamic registration, the authorization request, the consent posted as the
 * console posts it (a user's basic token), the code exchange with PKCE, tools listed with the
 * issued token, a refresh, and revocation ending the refresh; then every refusal over plain HTTP.
 *
 * The service's APP_URL is https://mcp.example.com (an https issuer, as in production); the
 * clients reach it at the test server's real address through a fetch that rewrites the origin.
 */
import { createHash, randomBytes } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { makePrompt } from './helpers/prompts.ts'

const APP_URL = 'https://mcp.example.com'
const RESOURCE = `${APP_URL}/mcp`
const REDIRECT = 'http://127.0.0.1:53682/callback'
/** The fields of the authorize query that the console passes on to the consent. */
const FIELDS = ['client_id', 'redirect_uri', 'response_type', 'code_challenge', 'code_challenge_method', 'state', 'scope', 'resource']

/** A fresh PKCE pair. */
function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

describe('MCP authorization (OAuth 2.1)', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  /** A workspace of Alice's other than her primary one, the one she grants. */
  let teamUuid: string
  let promptName: string
  /** fetch against the test server for URLs on APP_URL. */
  let serverFetch: FetchLike

  beforeAll(async () => {
    t = await createTestApp({ APP_URL })
    serverFetch = (input, init) => {
      const url = String(input instanceof Request ? input.url : input)
      return fetch(url.startsWith(APP_URL) ? t.url + url.slice(APP_URL.length) : url, init)
    }
    alice = await t.make.user({ name: 'Alice OAuth' })
    bob = await t.make.user({ name: 'Bob Other' })
    teamUuid = (await t.make.workspace(alice, { name: 'Alice Team' })).uuid
    promptName = (await makePrompt(t, alice, { name: 'Team Summary' }, teamUuid)).name
    await makePrompt(t, alice, { name: 'Primary Only' })
  })
  afterAll(async () => {
    await t?.close()
  })

  /** The consent as the console sends it: the authorize query's fields, a workspace, the decision. */
  const consentBody = (query: URLSearchParams, workspaceUuid: string, approve: boolean) => ({
    ...Object.fromEntries(FIELDS.filter((key) => query.has(key)).map((key) => [key, query.get(key)!])),
    workspace_uuid: workspaceUuid,
    approve,
  })

  /** An SDK client provider that completes the authorization as Alice, through the consent procedure. */
  class ConsentingProvider implements OAuthClientProvider {
    info: OAuthClientInformationMixed | undefined
    saved: OAuthTokens | undefined
    verifier = ''
    code: string | undefined
    constructor(
      readonly user: TestUser,
      readonly workspaceUuid: () => string,
      readonly authMethod: 'client_secret_basic' | 'client_secret_post' | 'none' = 'client_secret_basic',
    ) {}
    get redirectUrl() {
      return REDIRECT
    }
    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: 'Test MCP Client',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: this.authMethod,
      }
    }
    state() {
      return 'state-' + randomBytes(4).toString('hex')
    }
    clientInformation() {
      return this.info
    }
    saveClientInformation(info: OAuthClientInformationMixed) {
      this.info = info
    }
    tokens() {
      return this.saved
    }
    saveTokens(tokens: OAuthTokens) {
      this.saved = tokens
    }
    saveCodeVerifier(verifier: string) {
      this.verifier = verifier
    }
    codeVerifier() {
      return this.verifier
    }
    async redirectToAuthorization(authorizationUrl: URL) {
      expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${APP_URL}/oauth/authorize`)
      const res = await serverFetch(authorizationUrl, { redirect: 'manual' })
      expect(res.status).toBe(302)
      const consentUrl = new URL(res.headers.get('location')!)
      expect(consentUrl.origin + consentUrl.pathname).toBe(`${APP_URL}/console/oauth/consent`)
      expect(consentUrl.search).toBe(authorizationUrl.search)
      const query = consentUrl.searchParams
      const client = await t.http('GET', `/api/v1/oauth/clients/${query.get('client_id')}`, { token: this.user.token })
      expect(client.body.data).toMatchObject({ client_name: 'Test MCP Client', redirect_uris: [REDIRECT] })
      const answer = await t.http('POST', '/api/v1/oauth/consent', { token: this.user.token, body: consentBody(query, this.workspaceUuid(), true) })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      const back = new URL(answer.body.data.redirect_uri)
      expect(back.origin + back.pathname).toBe(REDIRECT)
      expect(back.searchParams.get('state')).toBe(query.get('state'))
      expect(back.searchParams.get('iss')).toBe(APP_URL)
      this.code = back.searchParams.get('code') ?? undefined
    }
  }

  /** Connects an SDK client to /mcp with `provider`, running the whole authorization when it has no token yet. */
  async function connect(provider: ConsentingProvider): Promise<Client> {
    const transport = () => new StreamableHTTPClientTransport(new URL(RESOURCE), { authProvider: provider, fetch: serverFetch })
    if (!provider.tokens()) {
      const first = new Client({ name: 'oauth-test', version: '1.0.0' })
      const pending = transport()
      await expect(first.connect(pending)).rejects.toThrow(/Unauthorized/)
      expect(provider.code).toBeTruthy()
      await pending.finishAuth(provider.code!)
    }
    const client = new Client({ name: 'oauth-test', version: '1.0.0' })
    await client.connect(transport())
    return client
  }

  /** Registers a client over plain HTTP. */
  async function register(body: Record<string, unknown> = {}) {
    const res = await serverFetch(`${APP_URL}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Raw Client', redirect_uris: [REDIRECT], ...body }),
    })
    return { status: res.status, body: (await res.json()) as any }
  }

  /** A token request over plain HTTP (form-encoded). */
  async function tokenRequest(fields: Record<string, string>, headers: Record<string, string> = {}) {
    const res = await serverFetch(`${APP_URL}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    })
    return { status: res.status, headers: res.headers, body: (await res.json()) as any }
  }

  /** An authorization request's query for a registered client. */
  function authorizeQuery(clientId: string, challenge: string, extra: Record<string, string> = {}) {
    return new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'xyz',
      resource: RESOURCE,
      ...extra,
    })
  }

  /** A code for `clientId` approved by `user` in `workspaceUuid`, and its verifier. */
  async function approvedCode(clientId: string, user: TestUser = alice, workspaceUuid = teamUuid) {
    const { verifier, challenge } = pkce()
    const answer = await t.http('POST', '/api/v1/oauth/consent', {
      token: user.token,
      body: consentBody(authorizeQuery(clientId, challenge), workspaceUuid, true),
    })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return { code: new URL(answer.body.data.redirect_uri).searchParams.get('code')!, verifier }
  }

  describe('discovery', () => {
    it("/mcp's 401 names the protected resource metadata, which names the service as authorization server", async () => {
      const res = await serverFetch(RESOURCE, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${APP_URL}/.well-known/oauth-protected-resource/mcp"`)
      for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
        const metadata = await serverFetch(APP_URL + path)
        expect(metadata.status).toBe(200)
        expect(metadata.headers.get('access-control-allow-origin')).toBe('*')
        expect(await metadata.json()).toMatchObject({ resource: RESOURCE, authorization_servers: [APP_URL] })
      }
      const server = await (await serverFetch(`${APP_URL}/.well-known/oauth-authorization-server`)).json()
      expect(server).toMatchObject({
        issuer: APP_URL,
        authorization_endpoint: `${APP_URL}/oauth/authorize`,
        token_endpoint: `${APP_URL}/oauth/token`,
        registration_endpoint: `${APP_URL}/oauth/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
      })
    })
  })

  describe('the SDK client', () => {
    it('registers, is authorized through the consent, lists the tools of the chosen workspace, refreshes, and revocation ends the refresh', async () => {
      const provider = new ConsentingProvider(alice, () => teamUuid)
      const client = await connect(provider)
      expect(provider.info).toMatchObject({ client_name: 'Test MCP Client', token_endpoint_auth_method: 'client_secret_basic' })
      expect(provider.info?.client_secret).toBeTruthy()
      const first = provider.saved!
      expect(first).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })
      expect(first.access_token).toMatch(/^wat_/)
      expect(first.refresh_token).toBeTruthy()
      // The tools of the consented workspace (Alice's team), not her primary one's.
      const names = (await client.listTools()).tools.map((tool) => tool.title ?? tool.name)
      expect(names.join(' ')).toContain(promptName)
      expect(names.join(' ')).not.toContain('Primary Only')
      await client.close()

      // An application token like any other: listed, bound to the workspace, with the client's name.
      const listed = await t.http('GET', '/api/v1/access-tokens', { token: alice.token })
      const own = listed.body.data.filter((row: { name: string }) => row.name === 'Test MCP Client (OAuth)')
      expect(own).toHaveLength(1)
      expect(own[0]).toMatchObject({ kind: 'application', workspace_uuid: teamUuid, abilities: ['read', 'write'] })
      const me = await t.http('GET', '/api/v1/user/token', { token: first.access_token })
      expect(me.body.data).toMatchObject({ uuid: own[0].uuid, workspace_uuid: teamUuid })

      // Refresh through the SDK: a new access token (the same row) and a new refresh token; the old ones stop working.
      const result = await auth(provider, { serverUrl: RESOURCE, fetchFn: serverFetch })
      expect(result).toBe('AUTHORIZED')
      const second = provider.saved!
      expect(second.access_token).not.toBe(first.access_token)
      expect(second.refresh_token).not.toBe(first.refresh_token)
      expect((await t.http('GET', '/api/v1/user/token', { token: first.access_token })).status).toBe(401)
      expect((await t.http('GET', '/api/v1/user/token', { token: second.access_token })).body.data.uuid).toBe(own[0].uuid)
      const basic = { authorization: `Basic ${Buffer.from(`${provider.info!.client_id}:${provider.info!.client_secret}`).toString('base64')}` }
      const reused = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token! }, basic)
      expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
      const again = await connect(provider)
      expect((await again.listTools()).tools.length).toBeGreaterThan(0)
      await again.close()

      // Revoking the token in the list ends it and its refresh token.
      expect((await t.http('DELETE', `/api/v1/access-tokens/${own[0].uuid}`, { token: alice.token })).status).toBe(204)
      expect((await t.http('GET', '/api/v1/user/token', { token: second.access_token })).status).toBe(401)
      const ended = await tokenRequest({ grant_type: 'refresh_token', refresh_token: second.refresh_token! }, basic)
      expect(ended).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    })

    it('a public client (token_endpoint_auth_method none) is authorized with PKCE alone', async () => {
      const provider = new ConsentingProvider(alice, () => alice.workspaceUuid, 'none')
      const client = await connect(provider)
      expect(provider.info?.client_secret).toBeUndefined()
      const names = (await client.listTools()).tools.map((tool) => tool.title ?? tool.name)
      expect(names.join(' ')).toContain('Primary Only')
      await client.close()
    })
  })

  describe('registration (RFC 7591)', () => {
    it('answers 201 with the client information; refuses bad metadata and plain-http redirect URIs off loopback', async () => {
      const created = await register({ client_uri: 'https://client.example.com' })
      expect(created.status).toBe(201)
      expect(created.body).toMatchObject({ client_name: 'Raw Client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic', client_secret_expires_at: 0 })
      expect(created.body.client_id).toBeTruthy()
      expect((await register({ redirect_uris: 'nope' })).body.error).toBe('invalid_client_metadata')
      expect((await register({ redirect_uris: ['javascript:alert(1)'] })).body.error).toBe('invalid_client_metadata')
      expect(await register({ redirect_uris: ['http://evil.example.com/cb'] })).toMatchObject({ status: 400, body: { error: 'invalid_redirect_uri' } })
      expect((await register({ token_endpoint_auth_method: 'private_key_jwt' })).body.error).toBe('invalid_client_metadata')
      expect((await register({ grant_types: ['client_credentials'] })).body.error).toBe('invalid_client_metadata')
      const secret = await t.sql('select client_secret_hash from oauth_clients where client_id = ?', [created.body.client_id])
      expect(secret[0].client_secret_hash).toBe(createHash('sha256').update(created.body.client_secret).digest('hex'))
    })
  })

  describe('GET /oauth/authorize', () => {
    let clientId: string
    beforeAll(async () => {
      clientId = (await register()).body.client_id
    })
    const get = async (query: URLSearchParams) => {
      const res = await serverFetch(`${APP_URL}/oauth/authorize?${query}`, { redirect: 'manual' })
      return { status: res.status, location: res.headers.get('location'), body: res.status === 302 ? null : ((await res.json()) as any) }
    }

    it('302s a valid request to the consent screen with the same query', async () => {
      const query = authorizeQuery(clientId, pkce().challenge, { prompt: 'consent' })
      expect(await get(query)).toMatchObject({ status: 302, location: `${APP_URL}/console/oauth/consent?${query}` })
    })

    it('answers 400, never a redirect, for an unknown client, an unregistered redirect URI, another response type, plain or missing PKCE, another resource', async () => {
      const { challenge } = pkce()
      const cases: [Record<string, string>, string][] = [
        [{ client_id: 'unknown-client' }, 'invalid_client'],
        [{ redirect_uri: 'https://evil.example.com/cb' }, 'invalid_request'],
        [{ response_type: 'token' }, 'unsupported_response_type'],
        [{ code_challenge_method: 'plain', code_challenge: 'x'.repeat(43) }, 'invalid_request'],
        [{ code_challenge: 'short' }, 'invalid_request'],
        [{ resource: 'https://other.example.com/mcp' }, 'invalid_target'],
      ]
      for (const [extra, error] of cases) {
        const res = await get(authorizeQuery(clientId, challenge, extra))
        expect(res, JSON.stringify(extra)).toMatchObject({ status: 400, location: null, body: { error } })
      }
      const missing = authorizeQuery(clientId, challenge)
      missing.delete('code_challenge')
      expect(await get(missing)).toMatchObject({ status: 400, body: { error: 'invalid_request' } })
    })
  })

  describe('POST /api/v1/oauth/consent', () => {
    let clientId: string
    beforeAll(async () => {
      clientId = (await register()).body.client_id
    })

    it('refused: the redirect URI with error=access_denied and the state', async () => {
      const answer = await t.http('POST', '/api/v1/oauth/consent', {
        token: alice.token,
        body: consentBody(authorizeQuery(clientId, pkce().challenge), teamUuid, false),
      })
      expect(answer.status).toBe(200)
      const back = new URL(answer.body.data.redirect_uri)
      expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'access_denied', state: 'xyz', iss: APP_URL })
    })

    it('names the refused field (400), takes only a basic token (401, 403), and no workspace of which the user is not a member (404)', async () => {
      const { challenge } = pkce()
      const post = (token: string, body: Record<string, unknown>) => t.http('POST', '/api/v1/oauth/consent', { token, body })
      for (const [extra, field] of [
        [{ redirect_uri: 'https://evil.example.com/cb' }, 'redirect_uri'],
        [{ code_challenge_method: 'plain' }, 'code_challenge_method'],
        [{ response_type: 'token' }, 'response_type'],
        [{ client_id: 'unknown-client' }, 'client_id'],
        [{ resource: 'https://other.example.com/mcp' }, 'resource'],
      ] as const) {
        const res = await post(alice.token, consentBody(authorizeQuery(clientId, challenge, extra), teamUuid, true))
        expect(res.status, JSON.stringify(res.body)).toBe(400)
        expect(res.body.issues[0].path).toEqual([field])
      }
      expect((await post(alice.token, { ...consentBody(authorizeQuery(clientId, challenge), teamUuid, true), extra: 1 })).status).toBe(400)
      expect((await post('', consentBody(authorizeQuery(clientId, challenge), teamUuid, true))).status).toBe(401)
      const appToken = (await t.as(alice).accessTokens.create({ name: 'integration' })).data.access_token
      expect((await post(appToken, consentBody(authorizeQuery(clientId, challenge), teamUuid, true))).status).toBe(403)
      // Bob cannot grant a client Alice's workspace; nothing is issued.
      const before = await t.sql('select count(*)::int as n from oauth_codes')
      const other = await post(bob.token, consentBody(authorizeQuery(clientId, challenge), teamUuid, true))
      expect(other.status).toBe(404)
      expect(JSON.stringify(other.body)).not.toContain('Alice Team')
      expect(await t.sql('select count(*)::int as n from oauth_codes')).toEqual(before)
      expect((await t.http('GET', '/api/v1/oauth/clients/unknown-client', { token: alice.token })).status).toBe(404)
      expect((await t.http('GET', `/api/v1/oauth/clients/${clientId}`, { token: '' })).status).toBe(401)
    })
  })

  describe('POST /oauth/token', () => {
    let confidential: { client_id: string; client_secret: string }
    let publicId: string
    beforeAll(async () => {
      confidential = (await register({ token_endpoint_auth_method: 'client_secret_post' })).body
      publicId = (await register({ token_endpoint_auth_method: 'none' })).body.client_id
    })
    const post = (fields: Record<string, string>) => ({ client_id: confidential.client_id, client_secret: confidential.client_secret, ...fields })

    it('exchanges a code once: a reused code, a wrong verifier, another client or redirect URI is invalid_grant', async () => {
      const { code, verifier } = await approvedCode(confidential.client_id)
      const ok = await tokenRequest(post({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, resource: RESOURCE }))
      expect(ok.status, JSON.stringify(ok.body)).toBe(200)
      expect(ok.headers.get('cache-control')).toBe('no-store')
      expect(ok.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })
      const reused = await tokenRequest(post({ grant_type: 'authorization_code', code, code_verifier: verifier }))
      expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })

      const wrong = await approvedCode(confidential.client_id)
      expect(await tokenRequest(post({ grant_type: 'authorization_code', code: wrong.code, code_verifier: pkce().verifier }))).toMatchObject({
        status: 400,
        body: { error: 'invalid_grant' },
      })
      // Spent by the failed attempt: the right verifier no longer helps.
      expect((await tokenRequest(post({ grant_type: 'authorization_code', code: wrong.code, code_verifier: wrong.verifier }))).body.error).toBe('invalid_grant')

      const others = await approvedCode(confidential.client_id)
      expect((await tokenRequest({ grant_type: 'authorization_code', client_id: publicId, code: others.code, code_verifier: others.verifier })).body.error).toBe(
        'invalid_grant',
      )
      const redirect = await approvedCode(confidential.client_id)
      const otherRedirect = post({ grant_type: 'authorization_code', code: redirect.code, code_verifier: redirect.verifier, redirect_uri: 'http://127.0.0.1:1/cb' })
      expect((await tokenRequest(otherRedirect)).body.error).toBe('invalid_grant')
    })

    it('refuses a wrong or missing client secret (invalid_client, 401), another resource (invalid_target), other grants, malformed requests', async () => {
      const { code, verifier } = await approvedCode(confidential.client_id)
      const exchange = { grant_type: 'authorization_code', code, code_verifier: verifier }
      const wrongSecret = await tokenRequest({ ...exchange, client_id: confidential.client_id, client_secret: 'wrong' })
      expect(wrongSecret).toMatchObject({ status: 401, body: { error: 'invalid_client' } })
      expect(wrongSecret.headers.get('www-authenticate')).toMatch(/^Basic/)
      expect((await tokenRequest({ ...exchange, client_id: confidential.client_id })).body.error).toBe('invalid_client')
      expect((await tokenRequest(exchange)).body.error).toBe('invalid_client')
      const basicWrong = { authorization: `Basic ${Buffer.from(`${confidential.client_id}:nope`).toString('base64')}` }
      expect((await tokenRequest(exchange, basicWrong)).status).toBe(401)
      expect((await tokenRequest({ ...exchange, client_id: 'unknown-client' })).body.error).toBe('invalid_client')
      // The refusals above did not spend the code (the client was refused first); a wrong resource does.
      expect(await tokenRequest(post({ ...exchange, resource: 'https://other.example.com/mcp' }))).toMatchObject({ status: 400, body: { error: 'invalid_target' } })

      expect((await tokenRequest(post({ grant_type: 'client_credentials' }))).body.error).toBe('unsupported_grant_type')
      expect((await tokenRequest(post({ grant_type: 'password', username: 'a', password: 'b' }))).body.error).toBe('unsupported_grant_type')
      expect((await tokenRequest(post({}))).body.error).toBe('invalid_request')
      expect((await tokenRequest(post({ grant_type: 'authorization_code', code: 'x' }))).body.error).toBe('invalid_request')
      expect((await tokenRequest(post({ grant_type: 'authorization_code', code: 'x', code_verifier: 'short' }))).body.error).toBe('invalid_request')
      expect((await tokenRequest(post({ grant_type: 'refresh_token' }))).body.error).toBe('invalid_request')
      expect((await tokenRequest(post({ grant_type: 'refresh_token', refresh_token: 'unknown' }))).body.error).toBe('invalid_grant')
      const json = await serverFetch(`${APP_URL}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(post({ grant_type: 'authorization_code' })),
      })
      expect(json.status).toBe(400)
      expect(((await json.json()) as { error: string }).error).toBe('invalid_request')
    })

    it("a refresh token is only its client's, and names no other resource", async () => {
      const { code, verifier } = await approvedCode(confidential.client_id)
      const issued = (await tokenRequest(post({ grant_type: 'authorization_code', code, code_verifier: verifier }))).body
      expect((await tokenRequest({ grant_type: 'refresh_token', client_id: publicId, refresh_token: issued.refresh_token })).body.error).toBe('invalid_grant')
      expect(
        (await tokenRequest(post({ grant_type: 'refresh_token', refresh_token: issued.refresh_token, resource: 'https://other.example.com/mcp' }))).body.error,
      ).toBe('invalid_target')
      const refreshed = await tokenRequest(post({ grant_type: 'refresh_token', refresh_token: issued.refresh_token, resource: RESOURCE }))
      expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200)
    })
  })
})
