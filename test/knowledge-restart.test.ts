/**
 * A restart during knowledge ingestion (docs/api/knowledge.md, "Ingestion"): `npm start` is killed
 * with SIGKILL while documents are `processing` (their URL answers only after the kill), and the
 * restarted process takes them up again and ends every one `ready`, once each: none stays
 * `processing`, none is stored twice. Then the restarted process is killed in the middle of a
 * document's sync (its page hangs), and the next one syncs it again (docs/api/knowledge.md, "A
 * process killed mid-sync"): the document ends with the new chunks only. Real processes on the
 * mode the suite runs in (a PGlite data folder, or a fresh PostgreSQL database), as
 * test/crash-recovery.test.ts starts them.
 */
import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest'
import { startServer, stopProcess, until, type ServerProcess, type ServiceProcess, processEnv } from './helpers/processes.ts'

const DOCUMENTS = 4

describe('npm start killed while documents are being ingested', () => {
  let env: Record<string, string>
  let drop: (() => Promise<void>) | undefined
  let site: Server
  let siteUrl: string
  /** Requests seen by the site, by path; the first of each path hangs until the site is told to answer. */
  const seen = new Map<string, number>()
  let answering = false
  /** What the pages say: changed before the sync, so the sync replaces every chunk. */
  let word = 'beacon'
  const processes: ServiceProcess[] = []

  beforeAll(async () => {
    site = createServer((req, res) => {
      const key = req.url ?? '/'
      seen.set(key, (seen.get(key) ?? 0) + 1)
      // Until the restart, every request hangs: its document stays `processing` in the killed process.
      if (!answering) return
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`Page ${key} says the ${word} code is ${key.replace(/\W/g, '')}.`)
    })
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
    const address = site.address()
    siteUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    const base = await processEnv('aw-knowledge-restart')
    drop = base.drop
    env = { ...base.env, TOOL_ALLOW_PRIVATE_NETWORK: 'true', TOOL_TIMEOUT_MS: '120000' }
  }, 60_000)
  afterAll(async () => {
    for (const proc of processes) await stopProcess(proc)
    site?.closeAllConnections()
    await new Promise((resolve) => site?.close(resolve))
    await drop?.()
  })

  it('takes the documents up again after the restart and ends each ready once; none stays processing', async () => {
    onTestFailed(() => console.error(processes.map((proc) => proc.output().slice(-6000)).join('\n---- next process ----\n')))
    const first = await startServer(env)
    processes.push(first)
    const signUp = await first.http('POST', '/api/v1/auth/sign-up', { body: { name: 'Trainer', email: 'trainer@example.com', password: 'correct horse battery staple' } })
    expect(signUp.status, JSON.stringify(signUp.body)).toBe(201)
    const token = String(signUp.body.data.access_token)
    const agent = (await first.http('POST', '/api/v1/agents', { token, body: { name: 'Beacon keeper', metadata: { large_language_model: 'local-test-model' } } })).body.data
    const sources = Array.from({ length: DOCUMENTS }, (_, n) => ({ type: 'url', url: `${siteUrl}/page-${n}` }))
    const trained = await first.http('POST', `/api/v1/agents/${agent.uuid}/train`, { token, body: { sources } })
    expect(trained.status, JSON.stringify(trained.body)).toBe(202)
    // Two at a time per process: two documents are mid-fetch, the others wait in the queue.
    await until(async () => seen.size, (count) => count >= 2, 20_000)
    const list = async (proc: ServerProcess) => (await proc.http('GET', `/api/v1/agents/${agent.uuid}/knowledge?per_page=50`, { token })).body.data as { status: string; chunks_count: number }[]
    expect((await list(first)).filter((doc) => doc.status === 'processing').length).toBeGreaterThanOrEqual(1)

    await stopProcess(first, 'SIGKILL')
    answering = true
    const second = await startServer(env)
    processes.push(second)
    const restarted = Date.now()
    const docs = await until(() => list(second), (found) => found.every((doc) => doc.status === 'ready'), 60_000)
    console.info(`documents ready ${Date.now() - restarted} ms after the restart`)
    expect(docs).toHaveLength(DOCUMENTS)
    for (const doc of docs) expect(doc.chunks_count).toBeGreaterThan(0)
    const hits = await second.http('POST', `/api/v1/agents/${agent.uuid}/knowledge/search`, { token, body: { query: 'beacon code page 3', limit: 50 } })
    // One document per page, each chunk stored once.
    const texts = (hits.body.data as { text: string }[]).map((hit) => hit.text)
    expect(new Set(texts).size).toBe(texts.length)
    expect(texts.filter((text) => text.includes('page3')).length).toBe(1)

    // A sync of page 0 whose page hangs until the process is killed; the next process syncs it again.
    const page0 = (docs as unknown as { uuid: string; url: string }[]).find((doc) => doc.url.endsWith('/page-0'))!
    const requestsBefore = seen.get('/page-0') ?? 0
    answering = false
    word = 'lantern'
    expect((await second.http('POST', `/api/v1/knowledge/${page0.uuid}/sync`, { token })).status).toBe(202)
    await until(async () => seen.get('/page-0') ?? 0, (count) => count > requestsBefore, 20_000)
    await stopProcess(second, 'SIGKILL')
    answering = true
    const third = await startServer(env)
    processes.push(third)
    const chunks = async () => (await third.http('GET', `/api/v1/knowledge/${page0.uuid}/chunks`, { token })).body.data as { text: string }[]
    const synced = await until(chunks, (found) => found.some((chunk) => chunk.text.includes('lantern')), 60_000)
    // The new chunks only: never a mix of the old page and the new one.
    expect(synced.every((chunk) => chunk.text.includes('lantern') && !chunk.text.includes('beacon'))).toBe(true)
    const document = (await third.http('GET', `/api/v1/knowledge/${page0.uuid}`, { token })).body.data
    expect(document).toMatchObject({ status: 'ready', sync_error: null, chunks_count: synced.length })
    expect(await stopProcess(third, 'SIGTERM')).toBe(0)
  }, 180_000)
})
