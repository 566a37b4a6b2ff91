/**
 * The tools a run of an agent offers its model (docs/api/runs.md, "Tool calls"): its HTTP tools,
 * its MCP servers (their tools are listed when the run starts, ./tool-mcp.ts), its linked
 * workflows (through the `linkedWorkflows` port, ./runs.port.ts) and the provider's web search
 * ({@link offeredTools}).
 */
import { ConflictError } from '../platform/errors.ts'
import { agentToolBindings, ToolCredentialUnavailableError, type ToolBinding } from '../catalog/index.ts'
import { mcpServerBindings, type McpServerBinding } from './tool-mcp.ts'
import type { ResolvedModel } from '../models/index.ts'
import type { ModelCall } from './run-types.ts'
import type { ResourceCtx } from '../context.ts'

/**
 * What a run of `agent` on `model` offers the model (docs/api/runs.md, "Tool calls"): the agent's
 * HTTP tools and MCP servers (its `toolRows`, src/catalog/tool-calls.ts `agentToolsSql`), its linked workflows the caller
 * may run (its `workflowRows`, read through the `linkedWorkflows` port; none past its depth limit at
 * `toolDepth`), and, with `metadata.web_search`, the provider's web search under `web_search`
 * (no other tool takes that name). A model without tool support is offered nothing. Web search
 * asked for but not available is a warning (docs/api/runs.md, "Warnings"), never silently dropped.
 * @throws ConflictError as {@link toolsOf}.
 */
export function offeredTools(
  ctx: ResourceCtx,
  agent: { metadata: Record<string, unknown>; toolRows: unknown; workflowRows: unknown },
  model: ResolvedModel,
  toolDepth: number,
): Required<Pick<ModelCall, 'tools' | 'mcpServers' | 'workflowTools' | 'webSearch' | 'warnings'>> {
  const wantsSearch = agent.metadata.web_search === true
  if (!model.llm.supportsTools) {
    const warnings = wantsSearch
      ? [{ code: 'web_search_unavailable', message: `${model.llm.name} cannot call tools, so it cannot search the web` }]
      : []
    return { tools: [], mcpServers: [], workflowTools: [], webSearch: null, warnings }
  }
  const webSearch = wantsSearch ? model.webSearch() : null
  const warnings =
    wantsSearch && !webSearch
      ? [
          {
            code: 'web_search_unavailable',
            message: `${model.llm.name} has no web search through its provider; the run goes on without it`,
          },
        ]
      : []
  const reserved = new Set(webSearch ? [webSearch.name] : [])
  const { tools, mcpServers } = toolsOf(ctx, agent.toolRows, reserved)
  const taken = new Set([...reserved, ...tools.map((tool) => tool.name)])
  const workflowTools = ctx.deps.linkedWorkflows.bindings(ctx, agent.workflowRows, { taken, toolDepth })
  return { tools, mcpServers, workflowTools, webSearch, warnings }
}

/** The agent's tools; a bound secret that cannot be opened (its key is gone) is a 409 naming the account, not a 500. */
function toolsOf(ctx: ResourceCtx, toolRows: unknown, reserved: ReadonlySet<string>): { tools: ToolBinding[]; mcpServers: McpServerBinding[] } {
  try {
    return { tools: agentToolBindings(ctx.config, toolRows, reserved), mcpServers: mcpServerBindings(ctx.config, toolRows) }
  } catch (error) {
    if (error instanceof ToolCredentialUnavailableError) throw new ConflictError(error.message)
    throw error
  }
}

