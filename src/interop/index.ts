/**
 * The interop capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/interop/ (docs/architecture.md, "Rules").
 */
export { callTool, listTools, UnknownToolError } from './mcp-server.service.ts'
export { ChatCompletionRequest, paramOf, ResponseRequest } from './openai-compat.schema.ts'
export * as openai from './openai-compat.service.ts'
export { chatFrames, responseFrames, type SseFrame } from './openai-compat.stream.ts'
export { type OpenAiErrorObject, toChatCompletion, toResponse } from './openai-compat.wire.ts'
export { A2AAgentHandler, agentCard, requireA2aAgent } from './a2a.service.ts'
