/**
 * Knowledge wire shapes (docs/api/knowledge.md): training sources, documents, search hits and
 * citations, with the row -> wire mapper.
 */
import { z } from 'zod'
import { KNOWLEDGE_REFRESHES, KNOWLEDGE_SOURCE_TYPES, KNOWLEDGE_STATUSES, type KnowledgeSourceType, type KnowledgeStatus, type KnowledgeSyncError } from '../../entities/index.ts'
import { envelope, iso, isoOrNull, jsonInt, name, pageQuery, sortParam, text, timestamp } from '../access/wire.ts'

/** Largest text source, in bytes of UTF-8 (1 MiB). */
export const KNOWLEDGE_TEXT_MAX_BYTES = 1024 * 1024
/** Most sources of one training request. */
export const KNOWLEDGE_SOURCES_MAX = 20
/** Longest URL source. */
export const KNOWLEDGE_URL_MAX = 2048
/** Longest search query, in characters. */
export const KNOWLEDGE_QUERY_MAX = 2000
/** Most pages one crawl reads (the root included), and the default. */
export const CRAWL_MAX_PAGES = 500
export const CRAWL_DEFAULT_PAGES = 50
/** Deepest link a crawl follows from its root (depth 0), and the default. */
export const CRAWL_MAX_DEPTH = 5
export const CRAWL_DEFAULT_DEPTH = 2

/** A text source's name. */
export const KnowledgeTextName = name(255)
/** A text source's text: not blank, at most {@link KNOWLEDGE_TEXT_MAX_BYTES} of UTF-8. */
export const KnowledgeText = text(KNOWLEDGE_TEXT_MAX_BYTES, 1)
  .refine((value) => value.trim().length > 0, 'must not be blank')
  .refine((value) => Buffer.byteLength(value, 'utf8') <= KNOWLEDGE_TEXT_MAX_BYTES, `must not exceed ${KNOWLEDGE_TEXT_MAX_BYTES} bytes`)
/** A URL source's URL (checked further when trained: http or https, no private address). */
export const KnowledgeUrl = text(KNOWLEDGE_URL_MAX, 1)

/** How often a URL document is synced with its page: `never` (the default), `hourly`, `daily` or `weekly`. */
export const KnowledgeRefresh = z.enum(KNOWLEDGE_REFRESHES)

/**
 * A URL source's crawl of the site under it (docs/api/knowledge.md, "Crawling a site"): pages read
 * at most, the root included (1..500, default 50), and how deep links are followed from the root
 * (0..5, default 2).
 */
export const KnowledgeCrawlInput = z.strictObject({
  max_pages: jsonInt(1, CRAWL_MAX_PAGES).default(CRAWL_DEFAULT_PAGES).meta({ description: `Pages read at most, the root included: 1..${CRAWL_MAX_PAGES}.` }),
  max_depth: jsonInt(0, CRAWL_MAX_DEPTH).default(CRAWL_DEFAULT_DEPTH).meta({ description: `Links followed from the root (depth 0) at most: 0..${CRAWL_MAX_DEPTH}.` }),
})

/** `crawl` on a source that is not a URL: refused under its own name, so the 400 names `sources.N.crawl`. */
const NoCrawl = z.never({ error: 'Only a URL source can crawl' }).optional().meta({ description: 'Not allowed: only a URL source can crawl.' })

/** A training source: text, an uploaded file, or a URL (with how often it is synced, and the crawl of its site). */
export const KnowledgeSource = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), name: KnowledgeTextName, text: KnowledgeText, crawl: NoCrawl }),
  z.strictObject({ type: z.literal('file'), key: text(255, 1), crawl: NoCrawl }),
  z.strictObject({ type: z.literal('url'), url: KnowledgeUrl, refresh: KnowledgeRefresh.optional(), crawl: KnowledgeCrawlInput.optional() }),
])
export type TKnowledgeSource = z.infer<typeof KnowledgeSource>

/** `POST /api/v1/agents/{agent_uuid}/train`. */
export const TrainAgentInput = z.strictObject({
  agent_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  sources: z.array(KnowledgeSource).min(1).max(KNOWLEDGE_SOURCES_MAX),
})
export type TTrainAgentInput = z.infer<typeof TrainAgentInput>

/** Why a sync failed: a stable `code` (docs/api/knowledge.md, "Keeping URL documents in sync") and a message a user can act on. */
export const KnowledgeSyncErrorShape = z.object({ code: z.string(), message: z.string() }).meta({ id: 'KnowledgeSyncError' })

/** A crawl root's settings, as trained. */
export const KnowledgeCrawl = z
  .object({ max_pages: z.number().int(), max_depth: z.number().int() })
  .meta({ id: 'KnowledgeCrawl', description: 'Pages read at most (the root included) and link depth from the root.' })

/** The KnowledgeDocument shape. */
export const KnowledgeDocument = z
  .object({
    uuid: z.uuid(),
    agent_uuid: z.uuid(),
    name: z.string(),
    source_type: z.enum(KNOWLEDGE_SOURCE_TYPES),
    media_key: z.string().nullable(),
    url: z.string().nullable(),
    mime_type: z.string(),
    size_bytes: z.number().int(),
    /** SHA-256 (hex) of the extracted text; null until it is extracted. */
    content_hash: z.string().nullable(),
    status: z.enum(KNOWLEDGE_STATUSES),
    /** Why it failed, in words a user can act on; null unless `failed`. */
    error: z.string().nullable(),
    chunks_count: z.number().int(),
    tokens_count: z.number().int(),
    /** How often a URL document is synced (`never` for text and files). */
    refresh: KnowledgeRefresh,
    /** When the last successful sync (or the ingestion of a URL) read the page; null before. */
    last_synced_at: timestamp().nullable(),
    /** When the next scheduled sync is due; null for `never`. */
    next_sync_at: timestamp().nullable(),
    /** Why the last sync failed; null when it succeeded (or none ran). */
    sync_error: KnowledgeSyncErrorShape.nullable(),
    /** The crawl root a crawled page belongs to; null for a root and every other document. */
    crawl_root_uuid: z.uuid().nullable(),
    /** A crawl root's settings; null for every other document (its pages included). */
    crawl: KnowledgeCrawl.nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'KnowledgeDocument' })
export type TKnowledgeDocument = z.infer<typeof KnowledgeDocument>

/** `{data: KnowledgeDocument}`. */
export const KnowledgeDocumentEnvelope = envelope(KnowledgeDocument)
/** `{data: [KnowledgeDocument, ...]}`: a training's documents, one per source, in order. */
export const KnowledgeDocumentsEnvelope = envelope(z.array(KnowledgeDocument))

/** The columns of a document as {@link KnowledgeDocumentRow}, over `d` (documents) and `a` (its agent). */
export const KNOWLEDGE_DOCUMENT_COLUMNS = `d.id::float8 as id, d.uuid, a.uuid as "agentUuid", d.name, d.source_type as "sourceType",
  d.media_key as "mediaKey", d.url, d.mime_type as "mimeType", d.size_bytes::float8 as "sizeBytes", d.content_hash as "contentHash",
  d.status, d.error, d.chunks_count as "chunksCount", d.tokens_count as "tokensCount", d.refresh, d.last_synced_at as "lastSyncedAt",
  d.next_sync_at as "nextSyncAt", d.sync_error as "syncError", d.created_at as "createdAt", d.updated_at as "updatedAt",
  (select r.uuid from knowledge_documents r where r.id = d.crawl_root_id) as "crawlRootUuid", d.crawl_max_pages as "crawlMaxPages",
  d.crawl_max_depth as "crawlMaxDepth"`

/** A document row as {@link KNOWLEDGE_DOCUMENT_COLUMNS} reads it. */
export interface KnowledgeDocumentRow {
  id: number
  uuid: string
  agentUuid: string
  name: string
  sourceType: KnowledgeSourceType
  mediaKey: string | null
  url: string | null
  mimeType: string
  sizeBytes: number | string
  contentHash: string | null
  status: KnowledgeStatus
  error: string | null
  chunksCount: number
  tokensCount: number
  refresh: z.infer<typeof KnowledgeRefresh>
  lastSyncedAt: Date | string | null
  nextSyncAt: Date | string | null
  syncError: KnowledgeSyncError | string | null
  crawlRootUuid: string | null
  crawlMaxPages: number | null
  crawlMaxDepth: number | null
  createdAt: Date | string
  updatedAt: Date | string
}

/** Row -> wire. */
export function toKnowledgeDocument(row: KnowledgeDocumentRow): TKnowledgeDocument {
  return {
    uuid: row.uuid,
    agent_uuid: row.agentUuid,
    name: row.name,
    source_type: row.sourceType,
    media_key: row.mediaKey,
    url: row.url,
    mime_type: row.mimeType,
    size_bytes: Number(row.sizeBytes),
    content_hash: row.contentHash,
    status: row.status,
    error: row.error,
    chunks_count: Number(row.chunksCount),
    tokens_count: Number(row.tokensCount),
    refresh: row.refresh,
    last_synced_at: isoOrNull(row.lastSyncedAt),
    next_sync_at: isoOrNull(row.nextSyncAt),
    // jsonb comes back parsed from pg, as text from some drivers.
    sync_error: typeof row.syncError === 'string' ? (JSON.parse(row.syncError) as KnowledgeSyncError) : row.syncError,
    crawl_root_uuid: row.crawlRootUuid,
    crawl: row.crawlMaxPages === null || row.crawlMaxDepth === null ? null : { max_pages: Number(row.crawlMaxPages), max_depth: Number(row.crawlMaxDepth) },
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

/** Sortable columns of the document list. */
export const KNOWLEDGE_SORTS = ['created_at', '-created_at', 'name', '-name', 'updated_at', '-updated_at'] as const

/** `GET /api/v1/agents/{agent_uuid}/knowledge`. */
export const KnowledgeListInput = z.strictObject({
  agent_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  ...pageQuery,
  sort: sortParam(KNOWLEDGE_SORTS, '-created_at'),
  status: z.enum(KNOWLEDGE_STATUSES).optional(),
  search: text(255).optional(),
})
export type TKnowledgeListInput = z.infer<typeof KnowledgeListInput>

/** Path of retrieve, delete and retry. */
export const KnowledgePathInput = z.strictObject({ document_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** `GET /api/v1/knowledge/{document_uuid}/chunks`: a page of the document's chunks, in document order. */
export const KnowledgeChunksInput = z.strictObject({ document_uuid: z.uuid(), workspace_uuid: z.uuid().optional(), ...pageQuery })
export type TKnowledgeChunksInput = z.infer<typeof KnowledgeChunksInput>

/** One chunk of a document: the text a run may be given, at its `position` (from 0) in the document. */
export const KnowledgeChunk = z
  .object({ uuid: z.uuid(), position: z.number().int(), text: z.string(), tokens_count: z.number().int() })
  .meta({ id: 'KnowledgeChunk' })
export type TKnowledgeChunk = z.infer<typeof KnowledgeChunk>

/** `PUT /api/v1/knowledge/{document_uuid}`: a URL document's `refresh`. */
export const KnowledgeUpdateInput = z.strictObject({ document_uuid: z.uuid(), workspace_uuid: z.uuid().optional(), refresh: KnowledgeRefresh })
export type TKnowledgeUpdateInput = z.infer<typeof KnowledgeUpdateInput>

/** `POST /api/v1/agents/{agent_uuid}/knowledge/search`. */
export const KnowledgeSearchInput = z.strictObject({
  agent_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  query: text(KNOWLEDGE_QUERY_MAX, 1).refine((value) => value.trim().length > 0, 'must not be blank'),
  limit: jsonInt(1, 50).default(5),
})
export type TKnowledgeSearchInput = z.infer<typeof KnowledgeSearchInput>

/** One search hit: exactly what a run would be given. */
export const KnowledgeHit = z
  .object({ chunk_uuid: z.uuid(), document_uuid: z.uuid(), document_name: z.string(), text: z.string(), score: z.number() })
  .meta({ id: 'KnowledgeHit' })
export type TKnowledgeHit = z.infer<typeof KnowledgeHit>

/** `{data: [KnowledgeHit, ...]}`, best first. */
export const KnowledgeSearchEnvelope = envelope(z.array(KnowledgeHit))

/** A citation of an assistant message: a chunk its run was given. */
export const Citation = z
  .object({ document_uuid: z.uuid(), chunk_uuid: z.uuid(), document_name: z.string(), score: z.number() })
  .meta({ id: 'Citation' })
export type TCitation = z.infer<typeof Citation>
