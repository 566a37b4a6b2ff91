/**
 * The console's single sign-on (docs/console.md; docs/api/sso.md) in a real browser against a
 * real OpenID Connect provider on loopback (test/helpers/oidc-provider.ts): "Sign in with <name>"
 * on the sign-in screen, the provider's round trip, the callback screen exchanging the one-time
 * code and going on to the screen asked for; a refused sign-in back on the sign-in screen with
 * its reason in words, and nobody signed in.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { describeConsole } from '../helpers/console.ts'
import { startOidcProvider } from '../helpers/oidc-provider.ts'

const SECRET = 'console-sso-client-secret-0123456789'
// Started before the service, which needs its issuer to start; the client is registered once the service's address is known.
const idp = await startOidcProvider()
idp.accounts.set('ada', { email: 'ada.sso@example.com', email_verified: true, name: 'Ada Single', given_name: 'Ada', family_name: 'Single' })
idp.accounts.set('eve', { email: 'eve.sso@example.com', email_verified: false, name: 'Eve Unverified' })

describeConsole(
  'web console: single sign-on',
  (t) => {
    beforeAll(() => {
      idp.addClient({ clientId: 'console', clientSecret: SECRET, redirectUri: `${t.server.url}/api/v1/auth/oidc/callback` })
    })
    afterAll(async () => {
      await idp.close()
    })

    /** Clicks "Sign in with Test IdP" and signs in at the provider as `account`. */
    const signInAt = async (page: Page, account: string) => {
      await page.getByRole('link', { name: 'Sign in with Test IdP' }).click()
      // The provider's interaction: the test provider signs in whoever `?account=` names (no login page to fill).
      await page.waitForURL((url) => url.pathname.startsWith('/interaction/'))
      const interaction = new URL(page.url())
      interaction.searchParams.set('account', account)
      await page.goto(interaction.href)
    }

    it('signs in with the provider and goes on to the screen asked for; a refused sign-in says why', async () => {
      const page = await t.newPage()
      await page.goto(`${t.server.url}/console/sign-in?next=/tokens`)
      // Both ways in: the provider's button and the password form.
      await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor()
      await expect.poll(() => page.getByRole('textbox', { name: 'E-mail' }).count()).toBe(1)
      await signInAt(page, 'ada')
      await page.waitForURL((url) => url.pathname === '/console/tokens')
      await page.getByRole('heading', { name: 'Access tokens' }).waitFor()
      // The session is Ada's, made by the sign-in (her user and primary workspace).
      const token = await page.evaluate(() => localStorage.getItem('aw.console.token'))
      const me = await t.server.http('GET', '/api/v1/user', { token: token ?? '' })
      expect(me.status).toBe(200)
      expect(me.body.data.email).toBe('ada.sso@example.com')
      expect(me.body.data.primary_workspace).not.toBeNull()
      // The code in the address bar is gone, and it cannot be used again.
      expect(page.url()).not.toContain('code=')
      await t.screenshot(page, 'sso-signed-in')

      // An unverified e-mail: back at sign-in, the reason in words, nobody signed in, no user made.
      const refused = await t.newPage()
      await refused.goto(`${t.server.url}/console/sign-in`)
      await signInAt(refused, 'eve')
      await refused.waitForURL((url) => url.pathname === '/console/sign-in' && url.searchParams.get('error') === 'email_not_verified')
      await refused.getByRole('alert').getByText('Your e-mail address is not verified at the identity provider.').waitFor()
      expect(await refused.evaluate(() => localStorage.getItem('aw.console.token'))).toBeNull()
      const eve = await t.server.http('POST', '/api/v1/auth/sign-in', { body: { email: 'eve.sso@example.com', password: 'anything at all' } })
      expect(eve.status).toBe(401)
      await t.screenshot(refused, 'sso-refused')

      // A used or made-up code on the callback screen: back to sign-in, told to sign in again.
      const stale = await t.newPage()
      await stale.goto(`${t.server.url}/console/sign-in/oidc?code=not-a-real-code`)
      await stale.waitForURL((url) => url.pathname === '/console/sign-in' && url.searchParams.get('error') === 'code_invalid')
      await stale.getByRole('alert').getByText('That sign-in link has expired or was already used. Sign in again.').waitFor()
    })
  },
  {
    OIDC_ISSUER: idp.issuer,
    OIDC_CLIENT_ID: 'console',
    OIDC_CLIENT_SECRET: SECRET,
    OIDC_NAME: 'Test IdP',
    OIDC_ALLOW_HTTP: 'true',
  },
)
