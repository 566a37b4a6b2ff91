/**
 * Runs before anything imports the AI SDK's providers: the entry points (src/server.ts,
 * src/worker.ts) import it first, and ES modules run in import order.
 *
 * `@ai-sdk/openai` and `@ai-sdk/anthropic` create a default provider when their module loads, and
 * that provider throws on an empty OPENAI_BASE_URL or ANTHROPIC_BASE_URL ("baseURL must be a
 * non-empty string"). The process would then die on import, before the configuration could
 * report anything. The configuration treats an empty variable as unset (src/platform/config.ts,
 * `loadConfig`), so these two are removed from the environment when empty. The service never
 * uses the SDK's default providers: it passes every base URL explicitly (src/models/registry.ts).
 */
for (const name of ['OPENAI_BASE_URL', 'ANTHROPIC_BASE_URL']) {
  if (process.env[name] === '') delete process.env[name]
}
