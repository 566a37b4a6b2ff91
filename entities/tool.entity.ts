import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { presentation, resourceKeys, softDelete, timestamps } from './columns.ts'
import { ownership } from './ownership.ts'
import { Provider } from './provider.entity.ts'

/**
 * Tool kinds: `api` (specification: sample value `api`) is one HTTP request; `mcp` is the tools of
 * a Model Context Protocol server reached over Streamable HTTP (docs/api/mcp-tools.md).
 */
export const TOOL_TYPES = ['api', 'mcp'] as const
export type ToolType = (typeof TOOL_TYPES)[number]

/** HTTP methods an `api` tool may call. */
export const TOOL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
export type ToolMethod = (typeof TOOL_METHODS)[number]

/**
 * An operation an agent can call (`tools`, docs/api/resources.md): `type` `api` is an HTTP request
 * (`method`, `url` template with `{{placeholders}}`, JSON-schema `input_schema`) to a provider,
 * authenticated with the account an agent binds to it; `type` `mcp` is an MCP server at `url`
 * whose tools (those in `allowedTools`, or all) the agent may call, with the same account.
 */
export const Tool = defineEntity({
  name: 'Tool',
  tableName: 'tools',
  indexes: [{ properties: ['workspace', 'createdAt'] }, { properties: ['user'] }],
  properties: {
    ...resourceKeys(),
    ...presentation(),
    type: p.enum(TOOL_TYPES).default('api'),
    provider: () =>
      p.manyToOne(Provider)
        .nullable()
        .fieldName('provider_id')
        .deleteRule('set null'),
    method: p.enum(TOOL_METHODS).default('GET'),
    url: p.string().length(2048),
    inputSchema: p.json<Record<string, unknown>>().fieldName('input_schema').default('{}'),
    /** `mcp` tools: the names of the server's tools offered to the model; null offers them all. */
    allowedTools: p.json<string[]>().fieldName('allowed_tools').nullable(),
    /** Every call of this tool by a run waits for a person's approval (docs/api/runs.md, "Approvals"). */
    requiresApproval: p.boolean().fieldName('requires_approval').default(false),
    /**
     * Calls of this tool are safe to repeat: a call whose result a dead process lost is made again
     * (HTTP tools send an `Idempotency-Key`), docs/api/runs.md, "Interrupted runs".
     */
    idempotent: p.boolean().default(false),
    credits: p.decimal('number').precision(12).scale(4).default(0),
    metadata: p.json<Record<string, unknown>>().default('{}'),
    ...ownership(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type ITool = InferEntity<typeof Tool>
