/**
 * What the OpenAPI document shows a reader beyond its schemas (./openapi-document.ts): the
 * description the reference at `/docs` opens with ("Getting a token"), and an example answer for
 * each error status.
 */

/**
 * The document's description, shown first in the reference at `/docs`: what the service is, then
 * how to get a token, which every protected operation needs (docs/api/authentication.md).
 */
export function describeService(baseUrl: string): string {
  const api = `${baseUrl}/api/v1`
  return `Multi-tenant backend for AI assistants in workspaces. Every operation is also a tRPC procedure at \`/trpc/<router>.<procedure>\`.

## Getting a token

Sign up (201, unless the server sets \`SIGN_UP_ENABLED=false\`) or, with an existing account, sign in (200). Both answer a token in \`data.access_token\` (a basic token, \`wst_...\`, valid for 30 days unless the server sets \`BASIC_TOKEN_TTL_DAYS\`):

\`\`\`sh
curl -X POST ${api}/auth/sign-up \\
  -H 'Content-Type: application/json' \\
  -d '{"name": "Ada Lovelace", "email": "ada@example.com", "password": "correct horse battery"}'

curl -X POST ${api}/auth/sign-in \\
  -H 'Content-Type: application/json' \\
  -d '{"email": "ada@example.com", "password": "correct horse battery"}'
# {"data": {"access_token": "wst_...", "token_type": "Bearer", "expires_at": "...", "user": {...}}}
\`\`\`

Send it on every other request as \`Authorization: Bearer <token>\` (in the reference at \`/docs\`: paste it as the **Bearer Token** under **Authentication**, and its try-it client sends it):

\`\`\`sh
curl ${api}/user -H 'Authorization: Bearer wst_...'
\`\`\`

A password has 8 to 256 characters. For an integration, make an application token (\`wat_...\`, optionally read-only or bound to one workspace) with \`POST /api/v1/access-tokens\`. \`POST /api/v1/auth/logout\` revokes the token it is sent with. Every error answers \`{code, message, issues?, request_id}\`; the document itself is at \`/openapi.json\`.`
}

/** What a 404 names (`NotFoundError`), by the path parameter an operation's resource is found by. */
const NOT_FOUND_LABELS: Record<string, string> = {
  account_uuid: 'Account',
  agent_uuid: 'Agent',
  dataset_uuid: 'Dataset',
  document_uuid: 'Knowledge document',
  execution_uuid: 'Workflow execution',
  item_uuid: 'Dataset item',
  key: 'Media',
  memory_uuid: 'Memory',
  message_uuid: 'Message',
  model_uuid: 'Large language model',
  prompt_uuid: 'Prompt',
  provider_uuid: 'Provider',
  run_uuid: 'Run',
  task_uuid: 'Command room task',
  thread_uuid: 'Thread',
  token_uuid: 'Access token',
  tool_uuid: 'Tool',
  user_id: 'Member',
  webhook_token: 'Webhook',
  workflow_uuid: 'Workflow',
  workspace_uuid: 'Workspace',
}

const EXAMPLE_REQUEST_ID = '0193f0c2-6a4e-7c1d-9b2a-5e8f3d2c1b0a'

/**
 * An example answer of `status` for the operation at `path`, shown beside the error in the
 * reference: each message is one the service really sends for that status.
 */
export function errorExample(status: number, path: string): Record<string, unknown> | undefined {
  const parameters = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '')
  const answer = (code: string, message: string, extra: Record<string, unknown> = {}) => ({
    message,
    code,
    ...extra,
    request_id: EXAMPLE_REQUEST_ID,
  })
  switch (status) {
    case 400: {
      const uuid = parameters.find((name) => name.endsWith('_uuid'))
      const issue = uuid
        ? { code: 'invalid_format', format: 'uuid', path: [uuid], message: `${uuid} must be a UUID` }
        : { code: 'unrecognized_keys', keys: ['extra'], path: [], message: 'Unrecognized key: "extra"' }
      return answer('BAD_REQUEST', 'Input validation failed', { issues: [issue] })
    }
    case 401:
      return answer('UNAUTHORIZED', 'Missing bearer token')
    case 403:
      if (path === '/api/v1/auth/sign-in') return answer('FORBIDDEN', 'Password sign-in is disabled on this server; use single sign-on')
      return answer('FORBIDDEN', 'This token is read-only')
    case 404: {
      if (path.startsWith('/api/v1/auth/oidc')) return answer('NOT_FOUND', 'Single sign-on not found')
      // The innermost resource of the path is the one not found; a path without one names the input's workspace.
      const label = parameters.length ? parameters.map((name) => NOT_FOUND_LABELS[name]).findLast(Boolean) : 'Workspace'
      return label ? answer('NOT_FOUND', `${label} not found`) : undefined
    }
    case 415:
      return answer('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type; send application/json')
    case 429:
      return answer('TOO_MANY_REQUESTS', 'Too many attempts, try again later')
    case 500:
      return answer('INTERNAL_SERVER_ERROR', 'Internal server error')
    default:
      return undefined
  }
}
