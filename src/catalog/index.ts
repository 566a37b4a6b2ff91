/**
 * The catalog capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/catalog/ (docs/architecture.md, "Rules").
 */
export { Account, AccountListInput, CreateAccountInput, DeleteAccountInput, RetrieveAccountInput, UpdateAccountInput } from './account.schema.ts'
export * as accounts from './accounts.service.ts'
export { resealSecrets } from './accounts.service.ts'
export * as categories from './categories.service.ts'
export { MediaUploadForm, MediaUploadResponse } from './media.schema.ts'
export * as media from './media.service.ts'
export { CreateProviderInput, Provider, ProviderListInput, ProviderPathInput, UpdateProviderInput } from './provider.schema.ts'
export * as providers from './providers.service.ts'
export { agentToolBindings, agentToolRows, agentToolsSql, bodyText, snapshotToolsSql, type Credential, credentialOf, credentialParts, excerpt, functionNames, objectTool, parseBody, scrub, secretForms, type ToolBinding, ToolCredentialUnavailableError, toToolSet } from './tool-calls.ts'
export { type HttpMethod, sendToolRequest, ToolHttpError, type ToolHttpLimits, type ToolHttpResponse } from './tool-http.ts'
export { AgentTool, type AgentToolRow, CreateToolInput, type PivotAccountRow, type TAgentTool, toAgentTool, Tool, TOOL_FIELDS, ToolListInput, ToolPathInput, type ToolRow, toPivotAccount, toTool, type TPivotAccount, type TTool, UpdateToolInput, withPivotAccount } from './tool.schema.ts'
export * as tools from './tools.service.ts'
