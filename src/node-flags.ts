/**
 * The Node.js flags every process of the service runs with (docs/api/conventions.md, runtime notes). The
 * package.json scripts `start` and `worker` write them out (a script cannot import them); the test
 * runner (vitest.config.ts), the tests that spawn a server and the benchmarks take them from here.
 *
 * `--experimental-async-context-frame` (Node 22; the default from Node 24): AsyncLocalStorage,
 * which MikroORM uses for transactions, keeps its store in the async context frame instead of
 * installing promise hooks. With the hooks every promise of the process pays for them: measured
 * with 50 callers, `GET /api/v1/ping` served 2,311 requests/s without the flag and 3,284-3,486
 * with it, the webhook benchmark's 3-node workflow 2,007/s against 2,157-2,598/s. The service
 * runs the same without the flag, only slower.
 */
export const NODE_FLAGS: readonly string[] = ['--experimental-async-context-frame']
