import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { captureLogs, createTestApp, type TestApp } from './helpers/app.ts'

describe('structured logs', () => {
  const { log, lines } = captureLogs()
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({}, { log })
  })
  afterAll(async () => t?.close())

  it('write JSON lines with the request id and never a token, password or service key', async () => {
    const password = 'hunter2-hunter2-secret'
    const signUp = await t.http('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Log Tester', email: 'log@example.com', password },
      headers: { 'x-service-authorization': 'acme-service-key-0123456789' },
    })
    expect(signUp.status).toBe(201)
    const token: string = signUp.body.data.access_token
    const me = await t.http('GET', '/api/v1/user', {
      token,
      headers: { 'x-service-authorization': 'acme-service-key-0123456789', 'x-request-id': 'log-test-1' },
    })
    expect(me.status).toBe(200)
    await t.http('POST', '/api/v1/auth/sign-in', { body: { email: 'log@example.com', password: 'wrong-password-here' } })

    const all = lines.join('')
    expect(lines.length).toBeGreaterThan(3)
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow()
    expect(lines.some((line) => JSON.parse(line).reqId === 'log-test-1')).toBe(true)
    for (const secret of [token, token.slice(4), password, 'wrong-password-here', 'acme-service-key-0123456789']) {
      expect(all).not.toContain(secret)
    }
  })
})
