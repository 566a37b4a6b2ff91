import { Migration } from '@mikro-orm/migrations';

/**
 * URL knowledge documents kept in sync with their page (docs/api/knowledge.md, "Keeping URL
 * documents in sync"): each document's `refresh` interval, its next due time (`next_sync_at`, a
 * due time of the process's one scheduler, found through the partial index), when it last synced
 * successfully, why its last sync failed (`sync_error`, `{code, message}`), the page's validators
 * for conditional requests (`etag`, `last_modified`), and `sync_started_at`, set while a sync is
 * claimed, so one document is synced by one job at a time across processes.
 */
export class Migration20261129140000_knowledge_sync extends Migration {

  override name = 'Migration20261129140000_knowledge_sync';

  override up(): void | Promise<void> {
    this.addSql(`alter table "knowledge_documents"
      add column "refresh" text check ("refresh" in ('never', 'hourly', 'daily', 'weekly')) not null default 'never',
      add column "last_synced_at" timestamptz null,
      add column "next_sync_at" timestamptz null,
      add column "sync_error" jsonb null,
      add column "sync_started_at" timestamptz null,
      add column "etag" text null,
      add column "last_modified" text null;`);
    this.addSql(`create index "knowledge_documents_next_sync_at_index" on "knowledge_documents" ("next_sync_at") where "next_sync_at" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "knowledge_documents_next_sync_at_index";`);
    this.addSql(`alter table "knowledge_documents"
      drop column if exists "refresh", drop column if exists "last_synced_at", drop column if exists "next_sync_at",
      drop column if exists "sync_error", drop column if exists "sync_started_at", drop column if exists "etag", drop column if exists "last_modified";`);
  }

}
