/**
 * Child process of `npm run bench:runs`: the local OpenAI-compatible server of the tests
 * (test/helpers/upstream.ts, answering `Echo: <last user message>` at once), in its own process
 * so that neither the load generator nor the service shares its event loop. Prints
 * `{"url": ...}` as its first stdout line; forgets its recorded requests every second (the
 * benchmark reads none); SIGTERM closes it.
 */
import { startUpstream } from '../test/helpers/upstream.ts'

const upstream = await startUpstream()
const forget = setInterval(() => upstream.reset(), 1_000)
process.stdout.write(`${JSON.stringify({ url: upstream.url })}\n`)
process.once('SIGTERM', () => {
  clearInterval(forget)
  void upstream.close().then(() => process.exit(0))
})
