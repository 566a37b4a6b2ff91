/**
 * Seeds what the agent rows of `npm run bench` read, through the public REST API: a tool
 * provider with an account, 3 tools, 2 workflows, a second user to share with, and 16 agents
 * (each bound to the 3 tools with the account and to the 2 workflows; the first shared with the
 * second user).
 */

/** What the agent rows request. */
export interface SeededAgents {
  /** The agent `GET /api/v1/agents/{uuid}` reads (3 tools, 2 workflows, 1 share). */
  agentUuid: string
  /** How many agents the caller's workspace holds (the list reads a page of 15). */
  agents: number
}

/** POSTs JSON with the caller's token and answers `data`; throws on a non-2xx answer. */
async function post(baseUrl: string, token: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`POST ${path}: HTTP ${response.status} ${text.slice(0, 300)}`)
  return (JSON.parse(text) as { data: Record<string, unknown> }).data
}

/**
 * Seeds the agents through the REST API as the user of `token`.
 * @param friendId the id of another user, who gets a `read` share of the first agent.
 */
export async function seedAgents(baseUrl: string, token: string, friendId: number): Promise<SeededAgents> {
  const provider = await post(baseUrl, token, '/api/v1/providers', { name: 'Bench tools', type: 'tool', base_url: 'https://bench.example' })
  const account = await post(baseUrl, token, '/api/v1/accounts', {
    name: 'Bench key',
    provider_uuid: provider.uuid,
    secret: 'sk-bench-0123456789abcdef',
  })
  const tools = []
  for (const name of ['Search', 'Weather', 'Calendar']) {
    tools.push(
      await post(baseUrl, token, '/api/v1/tools', {
        name,
        provider_uuid: provider.uuid,
        url: `https://bench.example/${name.toLowerCase()}?q={{query}}`,
        input_schema: { type: 'object', properties: { query: { type: 'string' } } },
      }),
    )
  }
  const workflows = []
  for (const name of ['Escalate', 'Summarise']) {
    workflows.push(
      await post(baseUrl, token, '/api/v1/workflows', {
        name,
        nodes: [
          { id: 'start', type: 'manual_trigger' },
          { id: 'next', type: 'set' },
        ],
        edges: [{ source: 'start', target: 'next' }],
      }),
    )
  }
  const agents = 16
  const uuids: string[] = []
  for (let i = 0; i < agents; i += 1) {
    const agent = await post(baseUrl, token, '/api/v1/agents', {
      name: `Bench agent ${i + 1}`,
      description: 'An agent for the benchmark',
      instruction: 'Answer briefly.',
      visibility: 'workspace',
      tools: tools.map((tool) => ({ tool_uuid: tool.uuid, account_uuid: account.uuid })),
      workflows: workflows.map((workflow) => ({ workflow_uuid: workflow.uuid })),
      metadata: { role: 'Assistant', conversation_starters: ['Hello'], memory: true },
    })
    uuids.push(String(agent.uuid))
  }
  const [agentUuid] = uuids
  await post(baseUrl, token, `/api/v1/agents/${agentUuid}/share`, { entity_type: 'user', entity_id: friendId, permission: 'read' })
  return { agentUuid, agents }
}
