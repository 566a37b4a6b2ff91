/**
 * What the knowledge capability adds to the service context's dependencies (src/context.ts,
 * `ServiceDeps`), by declaration merging.
 */
import type { KnowledgeEngine } from './ingest.ts'

/** What services call on the knowledge engine (./ingest.ts): queue documents, start a URL document's sync, read the retrieval mode. */
export type KnowledgePort = Pick<KnowledgeEngine, 'queue' | 'mode' | 'startSync'>

declare module '../context.ts' {
  interface ServiceDeps {
    knowledge: KnowledgePort
  }
}
