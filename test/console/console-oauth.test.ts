/**
 * The console's OAuth consent screen in a real browser (docs/api/mcp.md, "Authorization"): an MCP
 * client's authorization request opened signed out goes through sign-in and comes back to the
 * consent, which names the client and where it returns to; the workspace picked and Approve send
 * the browser to the client's redirect URI with a code, which the token endpoint exchanges for a
 * token bound to that workspace; Deny sends it back with `error=access_denied`.
 */
import { createHash, randomBytes } from 'node:crypto'
import { expect, it } from 'vitest'
import { describeConsole } from '../helpers/console.ts'

/** The client's redirect URI: nothing listens there; the browser's request to it is answered by the test. */
const REDIRECT = 'http://127.0.0.1:9/callback'

describeConsole('web console: OAuth consent', (t) => {
  async function registerClient(): Promise<{ client_id: string; client_secret: string }> {
    const res = await fetch(`${t.server.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Console Test Client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' }),
    })
    expect(res.status).toBe(201)
    return (await res.json()) as { client_id: string; client_secret: string }
  }

  function authorizeUrl(clientId: string, challenge: string): string {
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'console-state',
      resource: `${t.server.url}/mcp`,
    })
    return `${t.server.url}/oauth/authorize?${query}`
  }

  it('signs in, names the client, binds the token to the workspace picked, and returns to the client with a code', async () => {
    const user = await t.user('Consenting User')
    const team = await t.server.http('POST', '/api/v1/workspaces', { token: user.token, body: { name: 'Consent Team' } })
    expect(team.status).toBe(201)
    const client = await registerClient()
    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')

    const page = await t.newPage()
    await page.route(`${REDIRECT}**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' }))
    await page.goto(authorizeUrl(client.client_id, challenge))
    // Signed out: sign-in first, then back to the consent with the same request.
    await page.getByRole('textbox', { name: 'E-mail' }).fill(user.email)
    await page.getByRole('textbox', { name: 'Password' }).fill(user.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Allow Console Test Client to use your agents?' }).waitFor()
    await page.getByText('127.0.0.1:9').waitFor()
    await page.getByRole('combobox', { name: 'Workspace it may use' }).click()
    await page.getByRole('option', { name: 'Consent Team' }).click()
    await t.screenshot(page, 'oauth-consent')
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForURL((url) => url.href.startsWith(REDIRECT))
    const back = new URL(page.url())
    expect(back.searchParams.get('state')).toBe('console-state')
    const code = back.searchParams.get('code')!
    expect(code).toBeTruthy()

    const tokenRes = await fetch(`${t.server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, ...client }).toString(),
    })
    expect(tokenRes.status).toBe(200)
    const { access_token: accessToken } = (await tokenRes.json()) as { access_token: string }
    const me = await t.server.http('GET', '/api/v1/user/token', { token: accessToken })
    expect(me.body.data).toMatchObject({ kind: 'application', name: 'Console Test Client (OAuth)', workspace_uuid: team.body.data.uuid })
  })

  it('Deny returns to the client with error=access_denied', async () => {
    const user = await t.user('Refusing User')
    const client = await registerClient()
    const page = await t.newPage()
    await page.route(`${REDIRECT}**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' }))
    await t.open(page, user, '/sign-in')
    await page.goto(authorizeUrl(client.client_id, createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url')))
    await page.getByRole('button', { name: 'Deny' }).click()
    await page.waitForURL((url) => url.href.startsWith(REDIRECT))
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toMatchObject({ error: 'access_denied', state: 'console-state' })
  })
})
