import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { Agent } from './agent.entity.ts'
import { resourceKeys, timestamps } from './columns.ts'
import { recordOwnership } from './ownership.ts'

/** Where a knowledge document's text comes from (docs/api/knowledge.md, "Training"). */
export const KNOWLEDGE_SOURCE_TYPES = ['text', 'file', 'url'] as const
export type KnowledgeSourceType = (typeof KNOWLEDGE_SOURCE_TYPES)[number]

/** A document's ingestion status (docs/api/knowledge.md, "Documents"). */
export const KNOWLEDGE_STATUSES = ['queued', 'processing', 'ready', 'failed'] as const
export type KnowledgeStatus = (typeof KNOWLEDGE_STATUSES)[number]

/** How often a URL document is synced with its page (docs/api/knowledge.md, "Keeping URL documents in sync"). */
export const KNOWLEDGE_REFRESHES = ['never', 'hourly', 'daily', 'weekly'] as const
export type KnowledgeRefresh = (typeof KNOWLEDGE_REFRESHES)[number]

/** Why a document's last sync failed: a stable `code` and words a user can act on. */
export interface KnowledgeSyncError {
  code: string
  message: string
}

/**
 * One trained document of an agent (`knowledge_documents`, docs/api/knowledge.md). Hard-deleted,
 * with its chunks, when it is deleted or its agent is. `user_id` is who trained it: ingestion
 * embeds its chunks with that user's credentials. `source_text` keeps a text source for retries.
 * At most one document per agent and media key, per agent and URL, and per agent and extracted
 * text (`content_hash`): the partial unique indexes of the knowledge migration. The pages of a
 * crawl are URL documents too, so one page is one document of an agent whichever crawl found it.
 */
export const KnowledgeDocument = defineEntity({
  name: 'KnowledgeDocument',
  tableName: 'knowledge_documents',
  indexes: [{ properties: ['agent', 'createdAt'] }],
  properties: {
    ...resourceKeys(),
    agent: () =>
      p.manyToOne(Agent)
        .fieldName('agent_id')
        .deleteRule('cascade'),
    ...recordOwnership(),
    name: p.string().length(255),
    sourceType: p.enum(KNOWLEDGE_SOURCE_TYPES).fieldName('source_type'),
    mediaKey: p.string().length(255).nullable().fieldName('media_key'),
    url: p.text().nullable(),
    sourceText: p.text().nullable().lazy().fieldName('source_text'),
    mimeType: p.string().length(255).fieldName('mime_type'),
    sizeBytes: p.bigint('number').default(0).fieldName('size_bytes'),
    contentHash: p.string().length(64).nullable().fieldName('content_hash'),
    status: p.enum(KNOWLEDGE_STATUSES).default('queued'),
    error: p.text().nullable(),
    chunksCount: p.integer().default(0).fieldName('chunks_count'),
    tokensCount: p.integer().default(0).fieldName('tokens_count'),
    /** Claims of the document by an ingestion job; fences a stale worker's writes. */
    attempts: p.integer().default(0),
    /** A URL document's sync interval; `next_sync_at` is its next due time (null for `never`). */
    refresh: p.enum(KNOWLEDGE_REFRESHES).default('never'),
    lastSyncedAt: p.datetime().nullable().fieldName('last_synced_at'),
    nextSyncAt: p.datetime().nullable().fieldName('next_sync_at'),
    syncError: p.json<KnowledgeSyncError>().nullable().fieldName('sync_error'),
    /** Set while a sync job holds the document: one sync at a time, across processes. */
    syncStartedAt: p.datetime().nullable().fieldName('sync_started_at'),
    /** The page's validators, sent back in conditional requests (`If-None-Match`, `If-Modified-Since`). */
    etag: p.text().nullable(),
    lastModified: p.text().nullable().fieldName('last_modified'),
    /**
     * The crawl root a crawled page belongs to (docs/api/knowledge.md, "Crawling a site"); null for
     * a root and every other document. A foreign key to this table that cascades: deleting a root
     * deletes its pages.
     */
    crawlRootId: p.bigint('number').nullable().fieldName('crawl_root_id'),
    /** A crawl root's settings: pages read at most (the root included) and link depth from it; both null unless it crawls. */
    crawlMaxPages: p.integer().nullable().fieldName('crawl_max_pages'),
    crawlMaxDepth: p.integer().nullable().fieldName('crawl_max_depth'),
    /** When a crawl root's last crawl ended; null until its first, which the recovery sweep starts if it never did. */
    crawledAt: p.datetime().nullable().fieldName('crawled_at'),
    ...timestamps(),
  },
})

export type IKnowledgeDocument = InferEntity<typeof KnowledgeDocument>

/**
 * One chunk of a document's text (`knowledge_chunks`). `agent_id` is the document's, so retrieval
 * reads one agent's chunks through one index. Two columns live outside this entity, written and
 * read in SQL only (src/knowledge/retrieval.ts): `tsv`, the generated full-text vector (GIN
 * index), and `embedding`, a pgvector column added at start where the database has pgvector
 * (src/knowledge/vector-store.ts); `embedding_model` names the model that made it. Triggers keep,
 * per agent, how many chunks hold each lexeme (`knowledge_lexemes`, SQL only, for the full-text
 * ranking: src/migrations/Migration20261129170000_knowledge_retrieval.ts); chunks are inserted and
 * deleted, never updated.
 */
export const KnowledgeChunk = defineEntity({
  name: 'KnowledgeChunk',
  tableName: 'knowledge_chunks',
  indexes: [{ properties: ['agent'] }],
  uniques: [{ properties: ['document', 'position'] }],
  properties: {
    ...resourceKeys(),
    document: () =>
      p.manyToOne(KnowledgeDocument)
        .fieldName('document_id')
        .deleteRule('cascade'),
    agent: () =>
      p.manyToOne(Agent)
        .fieldName('agent_id')
        .deleteRule('cascade'),
    position: p.integer(),
    text: p.text(),
    tokens: p.integer(),
    embeddingModel: p.string().length(255).nullable().fieldName('embedding_model'),
    createdAt: p.datetime().fieldName('created_at').onCreate(() => new Date()),
  },
})

export type IKnowledgeChunk = InferEntity<typeof KnowledgeChunk>
