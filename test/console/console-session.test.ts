/**
 * The console's sessions in a real browser (docs/console.md): sign-up, sign-out and sign-in on the
 * screens, the workspace switcher, an ended token back to sign-in once (no loop), an unknown screen,
 * the first screen's size (budget: 250 KB of gzipped script) and its time to interactive (written
 * to test-artifacts/console/first-screen.json; the budget is checked by bench/console.ts).
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, it } from 'vitest'
import { CONSOLE_ARTIFACTS, describeConsole } from '../helpers/console.ts'

describeConsole('web console: sessions', (t) => {
  it('signs a new user up on the screen, shows the empty agents list, signs out and back in', async () => {
    const page = await t.newPage()
    await page.goto(`${t.server.url}/`)
    await page.waitForURL(/\/console\/sign-in/)
    await t.screenshot(page, 'sign-in')
    await page.getByRole('link', { name: 'Sign up' }).click()
    await page.getByLabel('Name').fill('Grace Hopper')
    await page.getByLabel('E-mail').fill(`grace-${Date.now()}@example.com`)
    await page.getByRole('textbox', { name: 'Password' }).fill('short')
    await page.getByRole('button', { name: 'Sign up' }).click()
    // The 400's issue is shown at its field.
    const password = page.getByRole('textbox', { name: 'Password' })
    await page.getByText('Must be at least 8 characters').waitFor()
    // The message is the field's own: its description names it.
    const describedBy = (await password.getAttribute('aria-describedby'))!.split(/\s+/).filter(Boolean)
    const messages = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).textContent()))
    expect(messages.join(' ')).toMatch(/8/)
    await t.screenshot(page, 'sign-up-invalid')
    await page.getByRole('textbox', { name: 'Password' }).fill('correct horse battery')
    await page.getByRole('button', { name: 'Sign up' }).click()
    await page.getByRole('heading', { name: 'Agents' }).waitFor()
    await page.getByText('No agents yet').waitFor()
    await t.screenshot(page, 'agents-empty')
    const email = await page.getByText(/@example\.com/).first().textContent()

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(/\/console\/sign-in/)
    await page.getByLabel('E-mail').fill(email!.trim())
    await page.getByRole('textbox', { name: 'Password' }).fill('wrong password!')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('alert').waitFor()
    await page.getByRole('textbox', { name: 'Password' }).fill('correct horse battery')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Agents' }).waitFor()
  })

  it('signs in with the keyboard alone, and the navigation is reachable by Tab', async () => {
    const user = await t.user()
    const page = await t.newPage()
    await page.goto(`${t.server.url}/console/sign-in`)
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    await page.keyboard.press('Tab')
    expect(await page.evaluate<string>('document.activeElement.getAttribute("autocomplete")')).toBe('email')
    await page.keyboard.type(user.email)
    await page.keyboard.press('Tab')
    await page.keyboard.type(user.password)
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Agents' }).waitFor()
    // Tab walks the header and reaches the sections' links; Enter follows one.
    let reached = ''
    for (let i = 0; i < 12 && reached !== 'Prompts'; i += 1) {
      await page.keyboard.press('Tab')
      reached = await page.evaluate<string>('document.activeElement.textContent')
    }
    expect(reached).toBe('Prompts')
    await page.keyboard.press('Enter')
    await page.waitForURL(/\/console\/prompts/)
  })

  it('sends an ended token back to sign-in once, saying so, and calls nothing more', async () => {
    const user = await t.user()
    const page = await t.newPage()
    await t.open(page, user, '/agents')
    await page.getByRole('heading', { name: 'Agents' }).waitFor()
    const logout = await t.server.http('POST', '/api/v1/auth/logout', { token: user.token })
    expect(logout.status).toBe(204)
    const calls: string[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/trpc')) calls.push(request.url())
    })
    await page.goto(`${t.server.url}/console/workflows`)
    await page.waitForURL(/\/console\/sign-in\?expired=1/)
    await page.getByText('Your session ended').waitFor()
    const afterLanding = calls.length
    await page.waitForTimeout(1500)
    expect(calls.length).toBe(afterLanding)
    expect(new URL(page.url()).searchParams.get('next')).toBe('/workflows')
    await t.screenshot(page, 'session-ended')
  })

  it('switches workspace from the header, and answers an unknown screen with words, not a blank page', async () => {
    const user = await t.user()
    const created = await t.server.http('POST', '/api/v1/workspaces', { token: user.token, body: { name: 'Second workspace' } })
    expect(created.status).toBe(201)
    const agent = await t.server.http('POST', '/api/v1/agents', {
      token: user.token,
      headers: { 'x-workspace-uuid': created.body.data.uuid },
      body: { name: 'Only in the second workspace', description: 'x' },
    })
    expect(agent.status).toBe(201)
    const page = await t.newPage()
    await t.open(page, user, '/agents')
    await page.getByText('No agents yet').waitFor()
    await page.getByRole('combobox', { name: 'Workspace' }).click()
    await page.getByRole('option', { name: 'Second workspace' }).click()
    await page.getByText('Only in the second workspace').waitFor()

    await page.goto(`${t.server.url}/console/no-such-screen`)
    await page.getByRole('heading', { name: 'Page not found' }).waitFor()
  })

  it('fits a 360 px wide screen, navigation behind the menu button', async () => {
    const user = await t.user('A user whose name is very long indeed, far longer than any header could hold')
    const page = await t.newPage({ width: 360, height: 740 })
    await t.open(page, user, '/agents')
    await page.getByRole('heading', { name: 'Agents' }).waitFor()
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
    expect(overflow).toBeLessThanOrEqual(0)
    await page.getByRole('button', { name: 'Toggle navigation' }).click()
    await page.getByRole('link', { name: 'Metrics' }).click()
    await page.waitForURL(/\/console\/metrics/)
    await t.screenshot(page, 'narrow-360')
  })

  it('keeps the first screen under 250 KB of gzipped script and records its time to interactive', async () => {
    const page = await t.newPage()
    const scripts = new Map<string, number>()
    page.on('response', async (response) => {
      const url = new URL(response.url())
      if (url.pathname.startsWith('/console/assets/') && url.pathname.endsWith('.js')) {
        scripts.set(url.pathname, Number(response.headers()['content-length'] ?? (await response.body()).length))
      }
    })
    await page.goto(`${t.server.url}/console/sign-in`, { waitUntil: 'commit' })
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    const interactiveMs = await page.evaluate(() => performance.now())
    // Compressed as served when the browser takes it (Brotli); the budget is stated for gzip: measure that too.
    const gzipped = await Promise.all(
      [...scripts.keys()].map(async (pathname) => {
        const res = await fetch(`${t.server.url}${pathname}`, { headers: { 'accept-encoding': 'gzip' } })
        return Number(res.headers.get('content-length'))
      }),
    )
    const gzipBytes = gzipped.reduce((sum, bytes) => sum + bytes, 0)
    expect(scripts.size).toBeGreaterThan(0)
    expect(gzipBytes).toBeLessThanOrEqual(250 * 1024)
    await writeFile(path.join(CONSOLE_ARTIFACTS, 'first-screen.json'), JSON.stringify({ interactiveMs, gzipBytes, scripts: [...scripts.keys()] }, null, 2))
  })
})
