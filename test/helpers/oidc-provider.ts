/**
 * A real OpenID Connect provider on loopback for the single sign-on tests (docs/api/sso.md):
 * panva's `oidc-provider`, the certified provider library, with test accounts, confidential clients
 * that must use PKCE, and a minimal interaction of its own in place of a login page: a test
 * chooses who signs in by adding `?account=<id>` (or `?deny=1`) to the interaction URL the
 * provider redirects to, so nothing scrapes HTML.
 *
 * The server listens before any client is known (the service under test needs the issuer URL to
 * start, the provider needs the service's redirect URI): clients are added afterwards, and each
 * addition rebuilds the provider behind the same server with the same signing key. A test can
 * also make the token endpoint misbehave (`tamper`): an ID token signed by another key, one for
 * another audience, or an answer that is not JSON.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import Provider, { type Adapter, type AdapterPayload, type ClientMetadata } from 'oidc-provider'

/** The claims of a test account (`sub` is its id). */
export interface TestAccount {
  email?: string
  email_verified?: boolean
  name?: string
  given_name?: string
  family_name?: string
  /** Microsoft Entra ID's "the e-mail's domain is verified", which it sends instead of `email_verified`. */
  xms_edov?: boolean
}

/** How the token endpoint misbehaves: not at all, another signing key, another audience, an HTML page. */
export type Tamper = 'none' | 'signature' | 'audience' | 'garbage'

export interface TestProvider {
  /** `http://127.0.0.1:<port>`: OIDC_ISSUER. */
  issuer: string
  /** Accounts by id; tests add their own. */
  accounts: Map<string, TestAccount>
  /** What the token endpoint does to its answers from now on. */
  tamper: Tamper
  /** Registers a confidential client (client_secret_post, PKCE required) with one redirect URI. */
  addClient: (client: { clientId: string; clientSecret: string; redirectUri: string }) => void
  /** Stops answering: connections are refused from now on. */
  close: () => Promise<void>
}

/** An RSA key as a JWK for the provider's JWKS, with the key id the tampering reuses. */
function signingKey(kid: string): { key: KeyObject; jwk: Record<string, unknown> } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { key: privateKey, jwk: { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } }
}

/**
 * The provider's storage: a map per kind of artifact (sessions, interactions, codes, grants, ...),
 * what its own development adapter does, without its warning on every start.
 */
function memoryAdapter(): (name: string) => Adapter {
  const store = new Map<string, AdapterPayload>()
  return (name) => {
    const key = (id: string) => `${name}:${id}`
    const own = () => [...store].filter(([id]) => id.startsWith(`${name}:`)).map(([, payload]) => payload)
    return {
      upsert: async (id, payload) => void store.set(key(id), payload),
      find: async (id) => store.get(key(id)),
      findByUserCode: async (userCode) => own().find((payload) => payload.userCode === userCode),
      findByUid: async (uid) => own().find((payload) => payload.uid === uid),
      consume: async (id) => {
        const payload = store.get(key(id))
        if (payload) payload.consumed = Math.floor(Date.now() / 1000)
      },
      destroy: async (id) => void store.delete(key(id)),
      revokeByGrantId: async (grantId) => {
        for (const [id, payload] of store) if (payload.grantId === grantId) store.delete(id)
      },
    }
  }
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** The ID token `jwt` re-signed with `key` (RS256), its payload changed by `change`. */
function resign(jwt: string, key: KeyObject, change: (payload: Record<string, unknown>) => void): string {
  const [header, payload] = jwt.split('.')
  const claims: Record<string, unknown> = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  change(claims)
  const input = `${header}.${b64(claims)}`
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`
}

/**
 * Starts a provider on a free loopback port with two accounts: `verified` (Ada, verified e-mail)
 * and `unverified` (Eve, whose e-mail the provider does not vouch for).
 * @param options.idTokenClaims put the profile claims in the ID token too (default: only in
 *   userinfo, the provider's default when an access token is issued as well).
 */
export async function startOidcProvider(options: { idTokenClaims?: boolean } = {}): Promise<TestProvider> {
  const kid = 'test-key'
  const real = signingKey(kid)
  const foreign = signingKey(kid)
  const clients: ClientMetadata[] = []
  const accounts = new Map<string, TestAccount>([
    ['verified', { email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace' }],
    ['unverified', { email: 'eve@example.com', email_verified: false, name: 'Eve Unverified' }],
  ])
  const adapter = memoryAdapter()
  let provider: Provider | undefined

  const server = createServer((req, res) => {
    if (!provider) {
      res.writeHead(503).end()
      return
    }
    const current = provider
    if (req.url?.startsWith('/interaction/')) interact(current, req, res).catch((error: unknown) => res.writeHead(500).end(String(error)))
    else void current.callback()(req, res)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  const issuer = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`

  const self: TestProvider = {
    issuer,
    accounts,
    tamper: 'none',
    addClient: ({ clientId, clientSecret, redirectUri }) => {
      clients.push({
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      })
      provider = build()
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }

  function build(): Provider {
    const built = new Provider(issuer, {
      clients,
      adapter,
      jwks: { keys: [real.jwk] },
      ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
      cookies: { keys: ['test-cookie-key-0123456789'] },
      pkce: { required: () => true },
      conformIdTokenClaims: !options.idTokenClaims,
      claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov'], profile: ['name', 'given_name', 'family_name'] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      findAccount: (_ctx, id) => {
        const account = accounts.get(id)
        return account ? { accountId: id, claims: () => ({ sub: id, ...account }) } : undefined
      },
    })
    built.use(async (ctx, next) => {
      await next()
      if (ctx.path !== '/token' || ctx.status !== 200 || self.tamper === 'none') return
      if (self.tamper === 'garbage') {
        ctx.type = 'text/html'
        ctx.body = '<html><body>Gateway says hello</body></html>'
        return
      }
      const body: unknown = ctx.body
      if (typeof body !== 'object' || body === null || !('id_token' in body) || typeof body.id_token !== 'string') return
      body.id_token =
        self.tamper === 'signature'
          ? resign(body.id_token, foreign.key, () => {})
          : resign(body.id_token, real.key, (claims) => {
              claims.aud = 'someone-else'
            })
    })
    return built
  }

  return self
}

/**
 * The interaction: logs in as `?account=` and grants every scope asked, in one step, or refuses
 * with `access_denied` for `?deny=1`.
 */
async function interact(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://provider')
  const details = await provider.interactionDetails(req, res)
  if (url.searchParams.get('deny')) {
    await provider.interactionFinished(
      req,
      res,
      { error: 'access_denied', error_description: 'The person said no' },
      { mergeWithLastSubmission: false },
    )
    return
  }
  const accountId = url.searchParams.get('account') ?? details.session?.accountId
  if (!accountId) throw new Error('add ?account=<id> to the interaction URL')
  const clientId = String(details.params.client_id)
  const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId })
  if (!grant) throw new Error('grant not found')
  grant.addOIDCScope(String(details.params.scope))
  const grantId = await grant.save()
  await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false })
}
