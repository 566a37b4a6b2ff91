import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'

describe('system routes', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(async () => t?.close())

  it('GET /health answers alive without touching anything', async () => {
    const res = await t.http('GET', '/health')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok' })
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('GET /ready checks the database, and Redis when REDIS_URL is set, and names the knowledge retrieval mode', async () => {
    const res = await t.http('GET', '/ready')
    expect(res.status).toBe(200)
    // PGlite loads pgvector; a PostgreSQL server has it only when its package is installed.
    const knowledge = process.env.DATABASE_URL ? res.body.knowledge : 'hybrid'
    expect(['hybrid', 'full-text']).toContain(knowledge)
    expect(res.body).toEqual({ status: 'ok', database: 'ok', redis: process.env.REDIS_URL ? 'ok' : 'disabled', knowledge })
  })

  it('GET /api/v1/ping is a procedure through the REST layer and through /trpc', async () => {
    expect(await t.caller().system.ping()).toEqual({ data: { status: 'ok' } })
    const rest = await t.http('GET', '/api/v1/ping')
    expect(rest.status).toBe(200)
    expect(rest.body).toEqual({ data: { status: 'ok' } })
    const rpc = await t.http('GET', '/trpc/system.ping')
    expect(rpc.body).toEqual({ result: { data: { data: { status: 'ok' } } } })
  })

  it('reuses a well-formed X-Request-Id and replaces a malformed one', async () => {
    const kept = await t.http('GET', '/api/v1/user', { headers: { 'x-request-id': 'trace-123' } })
    expect(kept.headers.get('x-request-id')).toBe('trace-123')
    expect(kept.body.request_id).toBe('trace-123')
    const replaced = await t.http('GET', '/api/v1/user', { headers: { 'x-request-id': 'bad id with spaces' } })
    expect(replaced.headers.get('x-request-id')).not.toBe('bad id with spaces')
    expect(replaced.body.request_id).toBe(replaced.headers.get('x-request-id'))
  })

  it('serves the OpenAPI document generated from the routers, with every REST path', async () => {
    const res = await t.http('GET', '/openapi.json')
    expect(res.status).toBe(200)
    expect(res.body.openapi).toBe('3.1.0')
    const paths = Object.keys(res.body.paths)
    for (const path of [
      '/api/v1/auth/sign-up',
      '/api/v1/auth/sign-in',
      '/api/v1/auth/logout',
      '/api/v1/user',
      '/api/v1/user/token',
      '/api/v1/access-tokens',
      '/api/v1/access-tokens/{token_uuid}',
      '/api/v1/workspaces',
      '/api/v1/workspaces/{workspace_uuid}',
      '/api/v1/workspaces/{workspace_uuid}/members',
      '/api/v1/workspaces/{workspace_uuid}/members/{user_id}',
    ]) {
      expect(paths).toContain(path)
    }
    expect(Object.keys(res.body.paths['/api/v1/workspaces/{workspace_uuid}']).sort()).toEqual(['delete', 'get', 'put'])
    expect(res.body.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
  })

  it('serves the reference page at /docs with its scripts from this origin only (test/docs-browser.test.ts runs it)', async () => {
    const res = await t.http('GET', '/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'")
    const scripts = [...String(res.body).matchAll(/<script src="([^"]+)"><\/script>/g)].map((match) => match[1] ?? '')
    expect(scripts).toEqual([
      expect.stringMatching(/^\/docs\/assets\/scalar-api-reference-[\d.]+\.js$/),
      expect.stringMatching(/^\/docs\/assets\/start-\w+\.js$/),
    ])
    for (const script of scripts) {
      const asset = await t.http('GET', script)
      expect(asset.status, script).toBe(200)
      expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/)
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    }
    expect((await t.http('GET', '/docs/assets/nope.js')).status).toBe(404)
    const doc = (await t.http('GET', '/openapi.json')).body
    expect(doc.info.description).toContain('## Getting a token')
  })

  it('answers unknown routes with a JSON 404', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['POST', '/api/v1/nope'],
      ['PATCH', '/api/v1/nope'],
    ] as const) {
      const res = await t.http(method, path, method === 'GET' ? {} : { body: {} })
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body.code).toBe('NOT_FOUND')
      expect(typeof res.body.message).toBe('string')
    }
  })

  it('answers a method the path does not have with a JSON 405 and Allow (test/rest-bad-input.test.ts has more)', async () => {
    const res = await t.http('PATCH', '/api/v1/workspaces', { body: {} })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, POST')
    expect(res.body.code).toBe('METHOD_NOT_SUPPORTED')
  })

  it('never leaks a stack trace in tRPC errors', async () => {
    const res = await t.http('GET', '/trpc/user.me')
    expect(res.status).toBe(401)
    expect(res.body.error.data.code).toBe('UNAUTHORIZED')
    expect(JSON.stringify(res.body)).not.toContain('stack')
  })
})

describe('graceful shutdown', () => {
  it('lets an in-flight request finish, then refuses new ones', async () => {
    const t = await createTestApp()
    try {
      // sign-up hashes a password (tens of milliseconds): still running when close() starts
      const received = new Promise((resolve) => t.app.server.once('request', resolve))
      const inFlight = t.http('POST', '/api/v1/auth/sign-up', {
        body: { name: 'Late Comer', email: 'late@example.com', password: 'correct horse battery' },
      })
      await received
      const closing = t.app.close()
      const res = await inFlight
      await closing
      expect(res.status).toBe(201)
      expect(res.body.data.user.email).toBe('late@example.com')
      await expect(fetch(`${t.url}/health`)).rejects.toThrow()
    } finally {
      await t.close().catch(() => {})
    }
  })
})
