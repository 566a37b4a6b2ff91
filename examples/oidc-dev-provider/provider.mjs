/* global process, console, URLSearchParams -- a Node script (the lint configuration declares no Node globals for plain JavaScript) */
/**
 * A development OpenID Connect provider, to try single sign-on (docs/api/sso.md) on one machine
 * without Keycloak or a cloud tenant. It is panva's `oidc-provider` (a development dependency of
 * the service) with one confidential client and a one-field login page: whoever types an e-mail
 * signs in as that person, with the e-mail marked verified. Never expose it: it checks no password.
 *
 * Run from the service's folder:
 *   IDP_PORT=4000 OIDC_CLIENT_ID=walkthrough OIDC_CLIENT_SECRET=walkthrough-secret \
 *   REDIRECT_URI=http://127.0.0.1:3000/api/v1/auth/oidc/callback node examples/oidc-dev-provider/provider.mjs
 * and start the service with
 *   OIDC_ISSUER=http://127.0.0.1:4000 OIDC_CLIENT_ID=walkthrough OIDC_CLIENT_SECRET=walkthrough-secret OIDC_ALLOW_HTTP=true npm start
 *
 * The login page is `GET /interaction/<uid>` (the provider sends the browser there); its form posts
 * `email` (and optionally `name`) back to the same URL, which signs in and grants every scope asked.
 * It prints `listening on <issuer>` once it answers.
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import Provider from 'oidc-provider'

const port = Number(process.env.IDP_PORT ?? 4000)
const issuer = `http://127.0.0.1:${port}`
const clientId = process.env.OIDC_CLIENT_ID ?? 'walkthrough'
const clientSecret = process.env.OIDC_CLIENT_SECRET ?? 'walkthrough-secret'
const redirectUri = process.env.REDIRECT_URI ?? 'http://127.0.0.1:3000/api/v1/auth/oidc/callback'

/** People who signed in, by e-mail (the subject is the e-mail: stable for a development provider). */
const people = new Map()

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  cookies: { keys: [randomBytes(32).toString('hex')] },
  pkce: { required: () => true },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (_ctx, id) => {
    const person = people.get(id)
    return person ? { accountId: id, claims: () => ({ sub: id, email: id, email_verified: true, name: person.name }) } : undefined
  },
})

const escape = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The login form, or (posted) the sign-in and the grant of every scope the service asked for. */
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res)
  if (req.method !== 'POST') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><title>Development login</title><h1>Development login</h1>
<p>Signs in as whoever you type. For trying single sign-on only.</p>
<form method="post" action="/interaction/${escape(details.uid)}">
<label>E-mail <input name="email" type="email" required></label>
<label>Name <input name="name"></label>
<button>Sign in</button></form>`)
    return
  }
  let body = ''
  for await (const chunk of req) body += chunk
  const form = new URLSearchParams(body)
  const email = form.get('email')?.trim().toLowerCase()
  if (!email) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('email is required')
    return
  }
  people.set(email, { name: form.get('name')?.trim() || email.split('@')[0] })
  const grant = new provider.Grant({ accountId: email, clientId: String(details.params.client_id) })
  grant.addOIDCScope(String(details.params.scope))
  const grantId = await grant.save()
  await provider.interactionFinished(req, res, { login: { accountId: email }, consent: { grantId } }, { mergeWithLastSubmission: false })
}

const server = createServer((req, res) => {
  if (req.url?.startsWith('/interaction/')) {
    interaction(req, res).catch((error) => res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error.message)))
  } else {
    provider.callback()(req, res)
  }
})
server.listen(port, '127.0.0.1', () => console.log(`listening on ${issuer}`))
