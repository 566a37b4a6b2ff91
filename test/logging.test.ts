import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
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

  it('write one line per request, with the route template, status and time; probes and console files at debug', async () => {
    lines.length = 0
    const user = await t.make.user()
    expect((await t.http('GET', `/api/v1/agents/${'0'.repeat(8)}-0000-7000-8000-000000000000`, { token: user.token, headers: { 'x-request-id': 'one-line' } })).status).toBe(404)
    expect((await fetch(`${t.url}/health`)).status).toBe(200)
    const entries = lines.map((line) => JSON.parse(line) as { level: number; msg: string; reqId?: string; route?: string; res?: { statusCode: number }; responseTime?: number; req?: { method: string; url: string } })
    const mine = entries.filter((entry) => entry.reqId === 'one-line')
    expect(mine).toHaveLength(1)
    expect(mine[0], JSON.stringify(mine[0])).toMatchObject({ level: 30, msg: 'request completed', route: '/api/v1/agents/{agent_uuid}', res: { statusCode: 404 }, req: { method: 'GET' } })
    expect(typeof mine[0].responseTime).toBe('number')
    expect(entries.some((entry) => entry.msg === 'incoming request')).toBe(false)
    const probe = entries.filter((entry) => entry.req?.url === '/health')
    expect(probe).toHaveLength(1)
    expect(probe[0]).toMatchObject({ level: 20, msg: 'request completed', res: { statusCode: 200 } })
  })
})

describe('logs on a terminal', () => {
  it('are pretty (pino-pretty) when standard output is a terminal, JSON lines otherwise', async () => {
    const command = `${process.execPath} --import tsx test/helpers/log-line.ts`
    // util-linux's script runs the command on a pseudo-terminal, as a person's shell would.
    const { stdout: onTerminal } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], { cwd: process.cwd() })
    expect(onTerminal).toContain('hello from the logger')
    expect(onTerminal).toContain('[redacted]')
    expect(onTerminal).not.toContain('hunter2')
    expect(onTerminal.trim().startsWith('{')).toBe(false)
    const { stdout: piped } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/helpers/log-line.ts'], { cwd: process.cwd() })
    expect(JSON.parse(piped.trim())).toMatchObject({ msg: 'hello from the logger', password: '[redacted]', level: 30 })
  })
})
