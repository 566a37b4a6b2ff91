import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'

describe('smoke', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(async () => t?.close())

  it('signs up and reads the user through the caller and over HTTP', async () => {
    const ada = await t.make.user({ name: 'Ada Lovelace' })
    const me = await t.as(ada).user.me()
    expect(me.data.first_name).toBe('Ada')
    const res = await t.http('GET', '/api/v1/user', { token: ada.token })
    expect(res.status).toBe(200)
    expect(res.body.data.id).toBe(ada.id)
  })
})
