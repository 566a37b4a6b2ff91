/**
 * The prompts capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/prompts/ (docs/architecture.md, "Rules").
 */
export { PROMPT_TEXT_INPUT_MAX, renderPrompt } from './prompt-render.ts'
export { CreatePromptInput, DeletePromptInput, ListPromptsInput, PromptList, PromptResponse, RetrievePromptInput, type TPromptInputField, UpdatePromptInput } from './prompt.schema.ts'
export * as prompts from './prompts.service.ts'
