/**
 * Single sign-on (docs/api/sso.md; routers/sso.router.ts, src/http/sso.routes.ts, src/sso/) against
 * a real OpenID Connect provider on loopback (./helpers/oidc-provider.ts): the whole code flow over
 * HTTP, as a browser follows it (the service's redirect to the provider, its interaction, the
 * redirect back to the callback, the console path with the one-time code, the code's exchange);
 * new, returning and existing users; every refusal (state, code, redirect, unverified e-mail,
 * refused sign-up, a tampered ID token, a provider that refuses, is down or answers garbage), with
 * nothing made or linked; the providers list and PASSWORD_SIGN_IN.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../src/platform/config.ts'
import { captureLogs, createTestApp, TEST_APP_KEY, type TestApp } from './helpers/app.ts'
import { checkAnswer } from './helpers/contract.ts'
import { expectErrorBody, expectIssues } from './helpers/expect.ts'
import { freePort } from './helpers/ports.ts'
import { startOidcProvider, type TestProvider } from './helpers/oidc-provider.ts'

/** The service's public URL (APP_URL): the browser below reaches it at the test server's real address. */
const APP_URL = 'https://agents.example.com'
const CALLBACK = `${APP_URL}/api/v1/auth/oidc/callback`
const SECRET = 'client-secret-that-must-never-show-0123456789'

/** An answer as the browser saw it: status, Location, the body's text. */
interface Answer {
  status: number
  location: string | null
  setCookie: string[]
  text: string
}

/**
 * A browser that follows nothing by itself: one cookie jar per origin, APP_URL sent to the test
 * server's address (a reverse proxy's job), every answer of the service checked against the
 * OpenAPI document (./helpers/contract.ts) and every answer kept, to look for the client secret.
 */
class Browser {
  private readonly jar = new Map<string, Map<string, string>>()
  constructor(
    private readonly app: TestApp,
    private readonly seen: string[],
  ) {}

  async get(target: string): Promise<Answer> {
    const url = new URL(target.startsWith(APP_URL) ? this.app.url + target.slice(APP_URL.length) : target, this.app.url)
    const cookies = this.jar.get(url.origin) ?? new Map<string, string>()
    this.jar.set(url.origin, cookies)
    const headers: Record<string, string> = cookies.size
      ? { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') }
      : {}
    const res = await fetch(url, { redirect: 'manual', headers })
    const text = await res.text()
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const name = pair.slice(0, pair.indexOf('='))
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line)) cookies.delete(name)
      else cookies.set(name, pair.slice(pair.indexOf('=') + 1))
    }
    const answer = { status: res.status, location: res.headers.get('location'), setCookie: res.headers.getSetCookie(), text }
    if (url.origin === this.app.url) {
      const json = res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text || null
      checkAnswer('GET', url.pathname, res.status, res.headers.get('content-type'), json)
      this.seen.push(JSON.stringify(answer))
    }
    return answer
  }

  /** Puts a cookie of the service back, as a browser that kept it would send it. */
  keep(name: string, value: string): void {
    const cookies = this.jar.get(this.app.url) ?? new Map<string, string>()
    cookies.set(name, value)
    this.jar.set(this.app.url, cookies)
  }
}

/**
 * Follows the provider's redirects from `location` (its authorization URL), signing in as
 * `account` (or refusing, `deny`) at its interaction, up to the redirect back to the service:
 * answers the callback URL (on APP_URL) without visiting it.
 */
async function throughProvider(browser: Browser, location: string, account: string, deny = false): Promise<string> {
  let next = location
  for (let hop = 0; hop < 12; hop += 1) {
    if (next.startsWith(CALLBACK)) return next
    const url = new URL(next)
    if (url.pathname.startsWith('/interaction/')) url.searchParams.set(deny ? 'deny' : 'account', deny ? '1' : account)
    const answer = await browser.get(url.href)
    if (!answer.location) throw new Error(`the provider stopped at ${url.pathname} with ${answer.status}: ${answer.text.slice(0, 300)}`)
    next = new URL(answer.location, url).href
  }
  throw new Error('too many redirects at the provider')
}

/** What one sign-in went through: the start's answer, the callback URL and the callback's answer. */
interface Flow {
  browser: Browser
  start: Answer
  callbackUrl: string
  callback: Answer
}

describe('single sign-on (OpenID Connect)', () => {
  let idp: TestProvider
  let t: TestApp
  /** Every answer of the service in this file, to look for the client secret in. */
  const seen: string[] = []
  const logs = captureLogs()

  const oidcEnv = (issuer: string, clientId: string) => ({
    APP_URL,
    OIDC_ISSUER: issuer,
    OIDC_CLIENT_ID: clientId,
    OIDC_CLIENT_SECRET: SECRET,
    OIDC_ALLOW_HTTP: 'true',
  })

  /** A service signing in with `provider` as client `clientId` (registered there). */
  async function appWith(provider: TestProvider, clientId: string, env: Record<string, string> = {}): Promise<TestApp> {
    const app = await createTestApp({ ...oidcEnv(provider.issuer, clientId), ...env }, { log: logs.log })
    provider.addClient({ clientId, clientSecret: SECRET, redirectUri: CALLBACK })
    return app
  }

  /** A whole sign-in in a new browser, up to the callback's answer. */
  async function signIn(app: TestApp, account: string, options: { redirect?: string; deny?: boolean } = {}): Promise<Flow> {
    const browser = new Browser(app, seen)
    const query = options.redirect === undefined ? '' : `?redirect=${encodeURIComponent(options.redirect)}`
    const start = await browser.get(`/api/v1/auth/oidc${query}`)
    expect(start.status, start.text).toBe(302)
    const callbackUrl = await throughProvider(browser, start.location ?? '', account, options.deny)
    const callback = await browser.get(callbackUrl)
    return { browser, start, callbackUrl, callback }
  }

  /** The one-time code of a successful callback, checked to land on `path`. */
  function codeOf(flow: Flow, path = '/console/sign-in'): string {
    expect(flow.callback.status, flow.callback.text).toBe(302)
    const location = new URL(flow.callback.location ?? '')
    expect(location.origin + location.pathname).toBe(APP_URL + path)
    const code = location.searchParams.get('code')
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    return code ?? ''
  }

  /** The error reason of a failed callback (or start), checked to carry no code. */
  function errorOf(answer: Answer): string | null {
    expect(answer.status, answer.text).toBe(302)
    const location = new URL(answer.location ?? '')
    expect(location.origin + location.pathname).toBe(`${APP_URL}/console/sign-in`)
    expect(location.searchParams.has('code')).toBe(false)
    return location.searchParams.get('error')
  }

  /** Exchanges a one-time code over REST. */
  const exchange = (app: TestApp, code: string) => app.http('POST', '/api/v1/auth/oidc/token', { body: { code } })

  const counts = async (app: TestApp) => {
    const [row] = await app.sql(
      `select (select count(*) from users)::int as users, (select count(*) from workspaces)::int as workspaces,
              (select count(*) from user_identities)::int as identities, (select count(*) from oidc_login_codes)::int as codes`,
    )
    return { users: Number(row.users), workspaces: Number(row.workspaces), identities: Number(row.identities), codes: Number(row.codes) }
  }

  beforeAll(async () => {
    idp = await startOidcProvider()
    t = await appWith(idp, 'agents', { OIDC_NAME: 'Company login' })
  })
  afterAll(async () => {
    await t?.close()
    await idp?.close()
  })

  describe('a sign-in through the provider (GET /api/v1/auth/oidc, GET /api/v1/auth/oidc/callback, POST /api/v1/auth/oidc/token)', () => {
    it('sends the browser to the provider with PKCE S256, state and nonce, and binds the sign-in to the browser with a cookie', async () => {
      const browser = new Browser(t, seen)
      const start = await browser.get('/api/v1/auth/oidc?redirect=/console/agents')
      expect(start.status).toBe(302)
      expect(start.text).toBe('')
      const url = new URL(start.location ?? '')
      expect(url.origin).toBe(idp.issuer)
      const params = Object.fromEntries(url.searchParams)
      expect(params).toMatchObject({
        client_id: 'agents',
        response_type: 'code',
        redirect_uri: CALLBACK,
        scope: 'openid email profile',
        code_challenge_method: 'S256',
      })
      expect(params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(params.state).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(params.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(start.setCookie).toEqual([
        `aw_oidc_state=${params.state}; Path=/api/v1/auth/oidc/callback; Max-Age=600; HttpOnly; SameSite=Lax; Secure`,
      ])
      // Only hashes of the state are stored.
      expect(await t.sql('select 1 from oidc_states where state_hash = ?', [params.state])).toEqual([])
    })

    it('makes a new user with a primary workspace, whose one-time code the console exchanges for a working token', async () => {
      const before = await counts(t)
      const flow = await signIn(t, 'verified', { redirect: '/console/agents?tab=mine' })
      const location = new URL(flow.callback.location ?? '')
      expect(location.searchParams.get('tab')).toBe('mine')
      const code = codeOf(flow, '/console/agents')
      // No token in a URL.
      expect(flow.callback.location).not.toMatch(/wst_|access_token|id_token/)

      const res = await exchange(t, code)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.token_type).toBe('Bearer')
      expect(res.body.data.access_token).toMatch(/^wst_/)
      expect(res.body.data.user).toMatchObject({ name: 'Ada Lovelace', first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' })

      const me = await t.http('GET', '/api/v1/user', { token: res.body.data.access_token })
      expect(me.status).toBe(200)
      expect(me.body.data.email).toBe('ada@example.com')
      expect(me.body.data.primary_workspace).toMatchObject({ name: "Ada's Workspace", is_owner: true })

      expect(await counts(t)).toEqual({
        ...before,
        users: before.users + 1,
        workspaces: before.workspaces + 1,
        identities: before.identities + 1,
      })
      const [identity] = await t.sql('select user_id, issuer, subject, email from user_identities where subject = ?', ['verified'])
      expect(identity).toEqual({ user_id: me.body.data.id, issuer: idp.issuer, subject: 'verified', email: 'ada@example.com' })
      const actions = await t.sql(`select action, changes from audit_events where actor_user_id = ? order by id`, [me.body.data.id])
      expect(actions.map((row) => row.action)).toEqual(['auth.sign_up', 'auth.link_identity', 'auth.sign_in'])
      expect(actions[2].changes).toEqual({ method: { from: null, to: 'oidc' } })
    })

    it('has made a user without a password: password sign-in answers the 401 of a wrong password', async () => {
      const res = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: 'ada@example.com', password: '!no-password' } })
      expectErrorBody(res, 401, 'UNAUTHORIZED', 'Invalid credentials')
    })

    it('signs the same person in again as the same user, linked once, with the default console path', async () => {
      const [{ id }] = await t.sql('select id from users where email = ?', ['ada@example.com'])
      const before = await counts(t)
      const code = codeOf(await signIn(t, 'verified'))
      const res = await exchange(t, code)
      expect(res.status).toBe(200)
      expect(res.body.data.user.id).toBe(id)
      expect(await counts(t)).toEqual(before)
    })

    it('links an existing password user by their verified e-mail; both ways of signing in then lead to them', async () => {
      const grace = await t.make.user({ name: 'Grace Hopper', email: 'grace@example.com' })
      idp.accounts.set('grace-at-idp', { email: 'Grace@Example.com', email_verified: true, name: 'Grace H.' })
      const before = await counts(t)
      const res = await exchange(t, codeOf(await signIn(t, 'grace-at-idp')))
      expect(res.status).toBe(200)
      expect(res.body.data.user).toMatchObject({ id: grace.id, name: 'Grace Hopper', email: 'grace@example.com' })
      expect(await counts(t)).toEqual({ ...before, identities: before.identities + 1 })
      const password = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: grace.email, password: grace.password } })
      expect(password.status).toBe(200)
      expect(password.body.data.user.id).toBe(grace.id)
    })

    it('links by the identity, not the e-mail, once linked: a changed address at the provider still signs in the same user', async () => {
      idp.accounts.set('grace-at-idp', { email: 'grace.hopper@example.com', email_verified: true })
      const res = await exchange(t, codeOf(await signIn(t, 'grace-at-idp')))
      expect(res.body.data.user.email).toBe('grace@example.com')
    })
  })

  describe('a provider that puts the e-mail in the ID token (no userinfo call), as Microsoft Entra ID does with xms_edov', () => {
    it('signs in with the ID token claims, taking xms_edov for a verified e-mail when email_verified is absent', async () => {
      const entra = await startOidcProvider({ idTokenClaims: true })
      entra.accounts.set('entra-user', { email: 'Lin@Contoso.example', xms_edov: true, name: 'Lin Chen' })
      entra.accounts.set('entra-unverified', { email: 'kim@contoso.example', xms_edov: false })
      const app = await appWith(entra, 'entra')
      try {
        const res = await exchange(app, codeOf(await signIn(app, 'entra-user')))
        expect(res.status).toBe(200)
        expect(res.body.data.user).toMatchObject({ email: 'lin@contoso.example', first_name: 'Lin', last_name: 'Chen' })
        expect(errorOf((await signIn(app, 'entra-unverified')).callback)).toBe('email_not_verified')
      } finally {
        await app.close()
        await entra.close()
      }
    })
  })

  describe('refusals at the callback: 302 to the console sign-in with error=<reason>, nothing made or linked', () => {
    it('email_not_verified: the provider does not vouch for the e-mail', async () => {
      const before = await counts(t)
      const flow = await signIn(t, 'unverified')
      expect(errorOf(flow.callback)).toBe('email_not_verified')
      expect(await counts(t)).toEqual(before)
      expect(await t.sql('select 1 from users where email = ?', ['eve@example.com'])).toEqual([])
    })

    it('email_missing: the provider gave no e-mail (the email scope)', async () => {
      idp.accounts.set('no-email', { name: 'Nobody' })
      const before = await counts(t)
      expect(errorOf((await signIn(t, 'no-email')).callback)).toBe('email_missing')
      expect(await counts(t)).toEqual(before)
    })

    it('access_denied: the person refused at the provider', async () => {
      const before = await counts(t)
      expect(errorOf((await signIn(t, 'verified', { deny: true })).callback)).toBe('access_denied')
      expect(await counts(t)).toEqual(before)
    })

    it('invalid_id_token: an ID token signed by another key, or issued for another client, with the same provider otherwise', async () => {
      idp.accounts.set('mallory', { email: 'mallory@example.com', email_verified: true, name: 'Mallory' })
      const before = await counts(t)
      try {
        for (const tamper of ['signature', 'audience'] as const) {
          idp.tamper = tamper
          expect(errorOf((await signIn(t, 'mallory')).callback), tamper).toBe('invalid_id_token')
        }
      } finally {
        idp.tamper = 'none'
      }
      expect(await counts(t)).toEqual(before)
      // The same person, untampered, signs in.
      expect((await exchange(t, codeOf(await signIn(t, 'mallory')))).status).toBe(200)
    })

    it('provider_unavailable: a token endpoint answering an HTML page', async () => {
      idp.accounts.set('gina', { email: 'gina@example.com', email_verified: true })
      const before = await counts(t)
      idp.tamper = 'garbage'
      try {
        expect(errorOf((await signIn(t, 'gina')).callback)).toBe('provider_unavailable')
      } finally {
        idp.tamper = 'none'
      }
      expect(await counts(t)).toEqual(before)
    })

    it('provider_unavailable: a provider that went down between the start and the callback', async () => {
      const fragile = await startOidcProvider()
      const app = await appWith(fragile, 'fragile')
      try {
        const browser = new Browser(app, seen)
        const start = await browser.get('/api/v1/auth/oidc')
        const callbackUrl = await throughProvider(browser, start.location ?? '', 'verified')
        await fragile.close()
        const before = await counts(app)
        expect(errorOf(await browser.get(callbackUrl))).toBe('provider_unavailable')
        expect(await counts(app)).toEqual(before)
      } finally {
        await app.close()
        await fragile.close().catch(() => {})
      }
    })

    it('sign_up_disabled: OIDC_ALLOW_SIGN_UP=false refuses a new person but still links an existing user', async () => {
      const app = await appWith(idp, 'closed', { OIDC_ALLOW_SIGN_UP: 'false' })
      try {
        const before = await counts(app)
        expect(errorOf((await signIn(app, 'verified')).callback)).toBe('sign_up_disabled')
        expect(await counts(app)).toEqual(before)
        expect(await app.sql('select 1 from users where email = ?', ['ada@example.com'])).toEqual([])
        const ada = await app.make.user({ email: 'ada@example.com' })
        const res = await exchange(app, codeOf(await signIn(app, 'verified')))
        expect(res.body.data.user.id).toBe(ada.id)
      } finally {
        await app.close()
      }
    })
  })

  describe('the state: 400 naming `state`', () => {
    /** The sign-in's state, from a callback URL. */
    const stateOf = (callbackUrl: string) => new URL(callbackUrl).searchParams.get('state') ?? ''

    it('refuses a state used already, even with its cookie sent again', async () => {
      const flow = await signIn(t, 'verified')
      codeOf(flow)
      flow.browser.keep('aw_oidc_state', stateOf(flow.callbackUrl))
      const reused = await flow.browser.get(flow.callbackUrl)
      expect(reused.status).toBe(400)
      expect(JSON.parse(reused.text)).toMatchObject({ code: 'BAD_REQUEST', issues: [{ path: ['state'] }] })
    })

    it("refuses the callback URL of another browser's sign-in (a link an attacker sends): the state cookie is missing", async () => {
      const attacker = new Browser(t, seen)
      const callbackUrl = await throughProvider(attacker, (await attacker.get('/api/v1/auth/oidc')).location ?? '', 'verified')
      const before = await counts(t)
      const lured = await new Browser(t, seen).get(callbackUrl)
      expect(lured.status).toBe(400)
      expect(JSON.parse(lured.text).issues[0].path).toEqual(['state'])
      expect(await counts(t)).toEqual(before)
    })

    it('refuses a state that is not the one the browser started with, or none', async () => {
      const browser = new Browser(t, seen)
      const tampered = new URL(await throughProvider(browser, (await browser.get('/api/v1/auth/oidc')).location ?? '', 'verified'))
      tampered.searchParams.set('state', 'x'.repeat(43))
      expect((await browser.get(tampered.href)).status).toBe(400)
      expect((await browser.get('/api/v1/auth/oidc/callback?code=abc')).status).toBe(400)
    })

    it('refuses a state older than 10 minutes', async () => {
      const late = new Browser(t, seen)
      const callbackUrl = await throughProvider(late, (await late.get('/api/v1/auth/oidc')).location ?? '', 'verified')
      await t.sql(`update oidc_states set expires_at = now() - interval '1 second'`)
      const res = await late.get(callbackUrl)
      expect(res.status).toBe(400)
      expect(JSON.parse(res.text).issues[0].path).toEqual(['state'])
    })
  })

  describe('the one-time code (POST /api/v1/auth/oidc/token): 400 naming `code`', () => {
    it('is used once, expires after 60 seconds, and an unknown one is refused the same way', async () => {
      const code = codeOf(await signIn(t, 'verified'))
      expect((await exchange(t, code)).status).toBe(200)
      expectIssues(await exchange(t, code), [['code']])
      expectIssues(await exchange(t, 'no-such-code'), [['code']])
      const late = codeOf(await signIn(t, 'verified'))
      await t.sql(`update oidc_login_codes set expires_at = now() - interval '1 second'`)
      expectIssues(await exchange(t, late), [['code']])
      expectIssues(await t.http('POST', '/api/v1/auth/oidc/token', { body: { code: '' } }), [['code']])
      expectIssues(await t.http('POST', '/api/v1/auth/oidc/token', { body: { code: 'x', extra: 1 } }), [[]])
    })

    it('is stored only as a hash', async () => {
      const code = codeOf(await signIn(t, 'verified'))
      expect(await t.sql('select 1 from oidc_login_codes where code_hash = ?', [code])).toEqual([])
      expect(await t.sql('select count(*)::int as n from oidc_login_codes where expires_at > now()')).toEqual([{ n: 1 }])
    })
  })

  describe('redirect: only a path of the console (400 naming `redirect`)', () => {
    it.each([
      'https://evil.example/console',
      '//evil.example/console',
      '/\\evil.example',
      '/console\\..\\..\\evil',
      '/console/../api/v1/user',
      '/console/%2e%2e/api',
      '/consolex',
      '/api/v1/user',
      'console/agents',
      '/console/agents#x',
      '/console/a b',
      `/console/${'a'.repeat(2000)}`,
    ])('refuses %s', async (redirect) => {
      const res = await t.http('GET', `/api/v1/auth/oidc?redirect=${encodeURIComponent(redirect)}`)
      expectIssues(res, [['redirect']])
      expect(res.headers.get('set-cookie')).toBeNull()
    })

    it('refuses a query parameter it does not know', async () => {
      expectIssues(await t.http('GET', '/api/v1/auth/oidc?next=/console'), [[]])
    })
  })

  describe('the providers (GET /api/v1/auth/providers) and PASSWORD_SIGN_IN', () => {
    it('says password and single sign-on, with the button label', async () => {
      const res = await t.http('GET', '/api/v1/auth/providers')
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ data: { password: true, oidc: { name: 'Company login' } } })
    })

    it('without OIDC_ISSUER: no single sign-on (404 on its routes); PASSWORD_SIGN_IN=false: sign-in answers 403', async () => {
      const plain = await createTestApp({ PASSWORD_SIGN_IN: 'false' })
      try {
        expect((await plain.http('GET', '/api/v1/auth/providers')).body).toEqual({ data: { password: false, oidc: null } })
        const user = await plain.make.user()
        const res = await plain.http('POST', '/api/v1/auth/sign-in', { body: { email: user.email, password: user.password } })
        expectErrorBody(res, 403, 'FORBIDDEN', 'Password sign-in is disabled on this server; use single sign-on')
        expectErrorBody(await plain.http('GET', '/api/v1/auth/oidc'), 404, 'NOT_FOUND', 'Single sign-on not found')
        expectErrorBody(await plain.http('GET', '/api/v1/auth/oidc/callback?state=x&code=y'), 404, 'NOT_FOUND')
        expectErrorBody(await plain.http('POST', '/api/v1/auth/oidc/token', { body: { code: 'x' } }), 404, 'NOT_FOUND')
      } finally {
        await plain.close()
      }
    })
  })

  describe('a provider that cannot be reached at the start', () => {
    it('sends the browser to the console sign-in with error=provider_unavailable, and tries discovery again next time', async () => {
      const port = await freePort()
      const app = await createTestApp({ ...oidcEnv(`http://127.0.0.1:${port}`, 'nobody') }, { log: logs.log })
      try {
        const browser = new Browser(app, seen)
        const start = await browser.get('/api/v1/auth/oidc')
        expect(errorOf(start)).toBe('provider_unavailable')
        expect(start.setCookie).toEqual([])
        expect(await app.sql('select count(*)::int as n from oidc_states')).toEqual([{ n: 0 }])
      } finally {
        await app.close()
      }
    })
  })

  describe('configuration', () => {
    it('refuses an http issuer without OIDC_ALLOW_HTTP, one of issuer and client id alone, and scopes without openid', () => {
      const load = (env: Record<string, string>) => () => loadConfig({ APP_KEY: TEST_APP_KEY, ...env })
      expect(load({ OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: 'x' })).toThrow(/^OIDC_ISSUER: must be an https URL/)
      expect(load({ OIDC_ISSUER: 'https://idp.example.com' })).toThrow(/^OIDC_CLIENT_ID: required/)
      expect(load({ OIDC_CLIENT_ID: 'x' })).toThrow(/^OIDC_ISSUER: required/)
      expect(load({ OIDC_ISSUER: 'https://idp.example.com', OIDC_CLIENT_ID: 'x', OIDC_SCOPES: 'email' })).toThrow(
        /^OIDC_SCOPES: must include the scope "openid"/,
      )
      expect(load({ OIDC_ISSUER: 'https://idp.example.com', OIDC_CLIENT_ID: 'x', OIDC_CLIENT_SECRET: SECRET })().oidc).toEqual({
        issuer: 'https://idp.example.com',
        clientId: 'x',
        scopes: 'openid email profile',
        name: 'Single sign-on',
        allowSignUp: true,
        allowHttp: false,
      })
      expect(load({})().oidc).toBeNull()
    })

    it('never shows the client secret: not in any answer, log line or serialised configuration', () => {
      expect(seen.length).toBeGreaterThan(20)
      for (const answer of seen) expect(answer).not.toContain(SECRET)
      expect(logs.lines.length).toBeGreaterThan(0)
      for (const line of logs.lines) expect(line).not.toContain(SECRET)
      expect(JSON.stringify(t.config)).not.toContain(SECRET)
      expect(t.config.oidc?.clientSecret).toBe(SECRET)
    })

    it("logs the callback's request line without its authorization code and state", () => {
      const urls = logs.lines.map((line) => JSON.parse(line) as { req?: { url?: string } }).flatMap((line) => line.req?.url ?? [])
      const callbacks = urls.filter((url) => url.includes('/auth/oidc/callback?'))
      expect(callbacks.length).toBeGreaterThan(3)
      for (const url of callbacks) {
        for (const [name, value] of new URL(url, 'http://x').searchParams) {
          if (name === 'code' || name === 'state') expect(value).toBe('[redacted]')
        }
      }
      expect(callbacks.some((url) => url.includes('code=[redacted]'))).toBe(true)
    })
  })
})
