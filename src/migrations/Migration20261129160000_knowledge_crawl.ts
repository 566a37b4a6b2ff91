import { Migration } from '@mikro-orm/migrations';

/**
 * URL knowledge documents that crawl a site (docs/api/knowledge.md, "Crawling a site"): a crawl
 * root keeps its settings (`crawl_max_pages`, `crawl_max_depth`, both set or both null) and when
 * its last crawl ended (`crawled_at`, null until the first one: the recovery sweep starts those it
 * finds); each page the crawl made a document of names its root (`crawl_root_id`). Deleting a
 * root deletes its pages through the foreign key, and their chunks through theirs. The existing
 * unique index on (agent, url) keeps one document per page and agent, so a crawl that runs again
 * after a restart cannot add a page twice.
 */
export class Migration20261129160000_knowledge_crawl extends Migration {

  override name = 'Migration20261129160000_knowledge_crawl';

  override up(): void | Promise<void> {
    this.addSql(`alter table "knowledge_documents"
      add column "crawl_root_id" bigint null,
      add column "crawl_max_pages" int null check ("crawl_max_pages" between 1 and 500),
      add column "crawl_max_depth" int null check ("crawl_max_depth" between 0 and 5),
      add column "crawled_at" timestamptz null,
      add constraint "knowledge_documents_crawl_settings_check" check (("crawl_max_pages" is null) = ("crawl_max_depth" is null));`);
    this.addSql(`alter table "knowledge_documents" add constraint "knowledge_documents_crawl_root_id_foreign"
      foreign key ("crawl_root_id") references "knowledge_documents" ("id") on update cascade on delete cascade;`);
    this.addSql(`create index "knowledge_documents_crawl_root_id_index" on "knowledge_documents" ("crawl_root_id") where "crawl_root_id" is not null;`);
    // The recovery sweep's scan for roots whose first crawl never started.
    this.addSql(`create index "knowledge_documents_uncrawled_index" on "knowledge_documents" ("updated_at") where "crawl_max_pages" is not null and "crawled_at" is null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "knowledge_documents_uncrawled_index";`);
    this.addSql(`drop index if exists "knowledge_documents_crawl_root_id_index";`);
    this.addSql(`alter table "knowledge_documents" drop constraint if exists "knowledge_documents_crawl_root_id_foreign";`);
    this.addSql(`alter table "knowledge_documents" drop constraint if exists "knowledge_documents_crawl_settings_check";`);
    this.addSql(`alter table "knowledge_documents"
      drop column if exists "crawl_root_id", drop column if exists "crawl_max_pages", drop column if exists "crawl_max_depth", drop column if exists "crawled_at";`);
  }

}
