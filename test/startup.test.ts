/**
 * Starting the service as `npm start` does (src/server.ts under tsx, embedded mode), with
 * environments a new user may well have: empty provider variables, which the configuration
 * treats as unset (src/platform/config.ts) and which must not stop the AI SDK's modules from loading
 * (src/provider-env.ts).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { NODE_FLAGS } from '../src/node-flags.ts'
import { freePort } from './helpers/ports.ts'
import { httpClient } from './helpers/app.ts'

describe('npm start', () => {
  it('starts with empty OPENAI_BASE_URL and ANTHROPIC_BASE_URL (unset), and runs an agent on the local model', async () => {
    const port = await freePort()
    const { DATABASE_URL: _db, REDIS_URL: _redis, OPENAI_API_KEY: _key, ...rest } = process.env
    void [_db, _redis, _key]
    const env = {
      ...rest,
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'aw-startup-')),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      OPENAI_BASE_URL: '',
      ANTHROPIC_BASE_URL: '',
    }
    const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', 'src/server.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    try {
      const http = httpClient(`http://127.0.0.1:${port}`)
      let ready = false
      for (let attempt = 0; attempt < 600 && !ready && child.exitCode === null; attempt++) {
        ready = await http('GET', '/ready').then(
          (res) => res.status === 200,
          () => false,
        )
        if (!ready) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(ready, output.slice(-2000)).toBe(true)
      const signUp = await http('POST', '/api/v1/auth/sign-up', { body: { name: 'Ada', email: 'ada@example.com', password: 'correct horse battery' } })
      const token = signUp.body.data.access_token as string
      const agent = await http('POST', '/api/v1/agents', { token, body: { name: 'Echo', instruction: 'Repeat.' } })
      const run = await http('POST', `/api/v1/agents/${agent.body.data.uuid}/run`, { token, body: { input: 'Hello' } })
      expect(run.status, JSON.stringify(run.body)).toBe(200)
      expect(run.body.data.run).toMatchObject({ status: 'succeeded', model: 'local-test-model' })
    } finally {
      child.kill('SIGTERM')
      await exited
    }
  }, 90_000)
})
