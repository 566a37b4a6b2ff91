/**
 * A typed tRPC client of the service: signs up and in, creates an agent on the built-in test
 * model, runs it, follows the run's events over the `runs.events` subscription (SSE) and reads a
 * metric. Every type comes from `agent-workspace-service/client`; any failure exits non-zero.
 *
 *   BASE=http://127.0.0.1:3000 node src/main.ts
 */
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, type TRPCClient } from '@trpc/client'
import { EventSource } from 'eventsource'
import type { AppRouter, RouterInputs, RouterOutputs } from 'agent-workspace-service/client'

const base = process.env.BASE ?? 'http://127.0.0.1:3000'
let token: string | undefined

/** Queries and mutations batched over HTTP; the subscription over SSE, where headers cannot be set, so the token goes in connectionParams. */
const trpc: TRPCClient<AppRouter> = createTRPCClient<AppRouter>({
  links: [
    splitLink({
      condition: (op) => op.type === 'subscription',
      // Node has no EventSource of its own; a browser passes none.
      true: httpSubscriptionLink({ url: `${base}/trpc`, EventSource, connectionParams: () => (token ? { authorization: `Bearer ${token}` } : {}) }),
      false: httpBatchLink({ url: `${base}/trpc`, headers: (): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {}) }),
    }),
  ],
})

type RunEvent = { id: string; type: string }

/** The run's events until the subscription ends after the final one. */
function followRun(runUuid: string): Promise<RunEvent[]> {
  return new Promise((resolve, reject) => {
    const seen: RunEvent[] = []
    trpc.runs.events.subscribe(
      { run_uuid: runUuid },
      {
        onData: (event) => seen.push({ id: event.id, type: event.data.type }),
        onError: reject,
        onComplete: () => resolve(seen),
      },
    )
  })
}

async function main(): Promise<void> {
  const email = `ada-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`
  const password = 'correct horse battery'
  const signUp: RouterInputs['auth']['signUp'] = { name: 'Ada Lovelace', email, password }
  await trpc.auth.signUp.mutate(signUp)
  const session = await trpc.auth.signIn.mutate({ email, password })
  token = session.data.access_token
  console.log(`signed up and in as ${email}`)

  const agent = await trpc.agents.create.mutate({
    name: 'Echo',
    instruction: 'Answer briefly.',
    metadata: { large_language_model: 'local-test-model' },
  })
  console.log(`created agent ${agent.data.uuid} (${agent.data.name})`)

  const run = await trpc.runs.agent.mutate({ agent_uuid: agent.data.uuid, input: 'Hello!' })
  console.log(`run ${run.data.run.uuid}: ${run.data.run.status}, output: ${run.data.run.output ?? ''}`)

  const events = await followRun(run.data.run.uuid)
  console.log(`events: ${events.map((event) => `${event.id} ${event.type}`).join(', ')}`)
  if (events.at(-1)?.type !== 'run.succeeded') throw new Error('the run did not end with run.succeeded')

  const agents: RouterOutputs['agents']['list'] = await trpc.agents.list.query()
  console.log(`agents: ${agents.data.map((one) => `${one.name} (runs: ${one.usage_count})`).join(', ')}`)

  const metric = await trpc.metrics.agents.mutate({ calculation: 'accumulated_count' })
  console.log(`metrics.agents accumulated_count: ${metric.total ?? 'null'}`)
  if (metric.total !== 1) throw new Error(`expected 1 agent, the metric says ${metric.total ?? 'null'}`)
}

main().then(
  () => console.log('trpc-client example: ok'),
  (error: unknown) => {
    console.error('trpc-client example failed:', error)
    process.exit(1)
  },
)
