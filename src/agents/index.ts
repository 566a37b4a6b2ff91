/**
 * The agents capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/agents/ (docs/architecture.md, "Rules").
 */
export { generateAgent } from './agent-generate.service.ts'
export { AgentPathInput, CreateAgentInput, GenerateAgentInput, ListAgentsInput, RetrieveAgentInput, ShareAgentInput, UpdateAgentInput } from './agent-input.schema.ts'
export { Agent } from './agent.schema.ts'
export * as agents from './agents.service.ts'
export { LeaderboardInput, LeaderboardResponse } from './leaderboard.schema.ts'
export * as leaderboard from './leaderboard.service.ts'
export {
  AgentSnapshot,
  AgentVersion,
  AgentVersionDetail,
  AgentVersionPathInput,
  AnnotateAgentVersionInput,
  ListAgentVersionsInput,
  VersionNumber,
} from './agent-version.schema.ts'
export * as versions from './agent-versions.service.ts'
export { AgentDocument, ExportAgentInput, ImportAgentInput, ImportAgentResponse } from './agent-portable.schema.ts'
export * as portable from './agent-portable.service.ts'
