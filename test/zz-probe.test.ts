import { it } from 'vitest'
import { writeFileSync } from 'node:fs'
import { createTestApp } from './helpers/app.ts'
it('probe', async () => {
  const t = await createTestApp()
  const a = await t.make.user()
  const doc = await t.http('GET', '/openapi.json')
  writeFileSync('/tmp/fz/openapi.json', JSON.stringify(doc.body, null, 2))
  const out: unknown[] = []
  const r = async (...args: Parameters<typeof t.http>) => { const x = await t.http(...args); out.push([args[0], args[1], JSON.stringify(args[2]?.rawBody ?? args[2]?.body ?? '').slice(0,100), x.status, x.headers.get('content-type'), x.body]) }
  await r('POST', '/api/v1/workspaces', { token: a.token, rawBody: '{bad', headers: { 'content-type': 'application/json' } })
  await r('POST', '/api/v1/workspaces', { token: a.token, rawBody: '', headers: { 'content-type': 'application/json' } })
  await r('POST', '/api/v1/workspaces', { token: a.token, rawBody: 'null', headers: { 'content-type': 'application/json' } })
  await r('POST', '/api/v1/workspaces', { token: a.token, rawBody: '[]', headers: { 'content-type': 'application/json' } })
  await r('POST', '/api/v1/workspaces', { token: a.token, rawBody: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  await r('POST', '/api/v1/workspaces', { token: a.token, rawBody: 'hello', headers: { 'content-type': 'text/plain' } })
  await r('POST', '/api/v1/workspaces', { token: a.token, body: { name: 5 } })
  await r('POST', '/api/v1/workspaces', { token: a.token, body: { name: 'x', foo: 1 } })
  await r('POST', '/api/v1/workspaces', { token: a.token, rawBody: '{"name":"\\ud800"}', headers: { 'content-type': 'application/json' } })
  await r('POST', '/api/v1/workspaces', { token: a.token, body: { name: 'x'.repeat(2_000_000) } })
  await r('GET', '/api/v1/workspaces?page=-1', { token: a.token })
  await r('GET', '/api/v1/workspaces?page=1&page=2', { token: a.token })
  await r('GET', '/api/v1/workspaces?foo=1', { token: a.token })
  await r('GET', '/api/v1/workspaces/not-a-uuid', { token: a.token })
  await r('GET', '/api/v1/workspaces/%00', { token: a.token })
  await r('GET', '/api/v1/workspaces/../..', { token: a.token })
  await r('GET', '/api/v1/workspaces/' + encodeURIComponent('../..'), { token: a.token })
  await r('DELETE', '/api/v1/workspaces/'+a.workspaceUuid+'/members/abc', { token: a.token })
  await r('DELETE', '/api/v1/workspaces/'+a.workspaceUuid+'/members/1e309', { token: a.token })
  await r('PUT', '/api/v1/workspaces/'+a.workspaceUuid, { token: a.token, rawBody: '{"is_onboarded":"true"}', headers: { 'content-type': 'application/json' } })
  await r('PUT', '/api/v1/workspaces/'+a.workspaceUuid, { token: a.token, rawBody: '{"metadata":{"onboarding_step":1e309}}', headers: { 'content-type': 'application/json' } })
  await r('POST', '/api/v1/auth/logout', { token: 'wrongwrongwrongwrong' })
  await r('POST', '/api/v1/auth/logout', { })

  console.log(JSON.stringify(out, null, 1))
  await t.close()
})
