import { Migration } from '@mikro-orm/migrations';

/**
 * Agent knowledge (docs/api/knowledge.md): `knowledge_documents` and `knowledge_chunks`, the
 * full-text vector of each chunk (`tsv`, generated, with a GIN index), and `citations` on
 * messages. The pgvector `embedding` column is not here: it is added at start where the database
 * has pgvector (src/knowledge/vector-store.ts), so one migration serves both kinds of database.
 */
export class Migration20261125170000_knowledge extends Migration {

  override name = 'Migration20261125170000_knowledge';

  override up(): void | Promise<void> {
    this.addSql(`create table "knowledge_documents" (
      "id" bigserial primary key, "uuid" uuid not null, "agent_id" bigint not null, "user_id" bigint null, "workspace_id" bigint not null,
      "name" varchar(255) not null, "source_type" text check ("source_type" in ('text', 'file', 'url')) not null,
      "media_key" varchar(255) null, "url" text null, "source_text" text null, "mime_type" varchar(255) not null,
      "size_bytes" bigint not null default 0, "content_hash" varchar(64) null,
      "status" text check ("status" in ('queued', 'processing', 'ready', 'failed')) not null default 'queued',
      "error" text null, "chunks_count" int not null default 0, "tokens_count" int not null default 0, "attempts" int not null default 0,
      "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "knowledge_documents" add constraint "knowledge_documents_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "knowledge_documents_agent_id_created_at_index" on "knowledge_documents" ("agent_id", "created_at");`);
    this.addSql(`create unique index "knowledge_documents_agent_media_key_unique" on "knowledge_documents" ("agent_id", "media_key") where "media_key" is not null;`);
    this.addSql(`create unique index "knowledge_documents_agent_url_unique" on "knowledge_documents" ("agent_id", "url") where "source_type" = 'url';`);
    this.addSql(`create unique index "knowledge_documents_agent_content_hash_unique" on "knowledge_documents" ("agent_id", "content_hash") where "content_hash" is not null;`);
    // The recovery sweep's scan: only the few documents still on their way.
    this.addSql(`create index "knowledge_documents_pending_index" on "knowledge_documents" ("updated_at") where "status" in ('queued', 'processing');`);
    this.addSql(`alter table "knowledge_documents" add constraint "knowledge_documents_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "knowledge_documents" add constraint "knowledge_documents_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "knowledge_documents" add constraint "knowledge_documents_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);

    this.addSql(`create table "knowledge_chunks" (
      "id" bigserial primary key, "uuid" uuid not null, "document_id" bigint not null, "agent_id" bigint not null,
      "position" int not null, "text" text not null, "tokens" int not null, "embedding_model" varchar(255) null,
      "created_at" timestamptz not null,
      "tsv" tsvector generated always as (to_tsvector('english', "text")) stored);`);
    this.addSql(`alter table "knowledge_chunks" add constraint "knowledge_chunks_uuid_unique" unique ("uuid");`);
    this.addSql(`alter table "knowledge_chunks" add constraint "knowledge_chunks_document_id_position_unique" unique ("document_id", "position");`);
    this.addSql(`create index "knowledge_chunks_agent_id_index" on "knowledge_chunks" ("agent_id");`);
    this.addSql(`create index "knowledge_chunks_tsv_index" on "knowledge_chunks" using gin ("tsv");`);
    this.addSql(`alter table "knowledge_chunks" add constraint "knowledge_chunks_document_id_foreign" foreign key ("document_id") references "knowledge_documents" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "knowledge_chunks" add constraint "knowledge_chunks_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "messages" add "citations" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "messages" drop column "citations";`);
    this.addSql(`drop table if exists "knowledge_chunks" cascade;`);
    this.addSql(`drop table if exists "knowledge_documents" cascade;`);
  }

}
