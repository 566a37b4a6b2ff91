import { Migration } from '@mikro-orm/migrations';

/**
 * How many of each agent's chunks hold each lexeme (`knowledge_lexemes`), for the full-text
 * ranking (docs/api/knowledge.md, "Retrieval"; src/knowledge/retrieval.ts): it weighs a query's
 * lexemes by how rare they are among the agent's chunks, and never asks the index for the chunks of
 * a lexeme most of them hold. The row with the empty lexeme counts the agent's chunks (no real
 * lexeme is empty).
 *
 * Triggers on `knowledge_chunks` keep the counts, whoever writes the chunks (ingestion, syncs,
 * deletions and their cascades, SQL): once per statement, from its inserted or deleted rows.
 * Chunks are inserted and deleted, never updated. A transaction that changes an agent's counts
 * holds a per-agent advisory lock (class 60602) until it ends, so two ingestions of one agent wait
 * for each other instead of deadlocking on the rows of common lexemes. When a statement deletes
 * all of an agent's chunks (the agent's knowledge removed), its counts go at once.
 *
 * `knowledge_full_text_ranking` runs the full-text ranking's AND queries, one group of lexemes
 * after another until enough chunks are found (src/knowledge/retrieval.ts builds the groups): a
 * function, so that a search is one statement and one short plan per group tried, whatever the
 * number of groups. Its query is planned with each group's values (a custom plan): a generic plan
 * would guess the agent's share of the table and the lexemes' frequency.
 *
 * Existing chunks are counted here, after the triggers exist (their creation locks the table
 * against writes until the migration commits).
 */
export class Migration20261129170000_knowledge_retrieval extends Migration {

  override name = 'Migration20261129170000_knowledge_retrieval';

  override up(): void | Promise<void> {
    this.addSql(`create table "knowledge_lexemes" (
      "agent_id" bigint not null, "lexeme" text not null, "chunks" int not null,
      constraint "knowledge_lexemes_pkey" primary key ("agent_id", "lexeme"));`);
    this.addSql(`create function knowledge_lexemes_count() returns trigger language plpgsql as $$
      declare
        sign int := case tg_op when 'INSERT' then 1 else -1 end;
      begin
        perform pg_advisory_xact_lock(60602, (a.agent_id % 2147483647)::int)
          from (select distinct agent_id from changed) a order by a.agent_id;
        if tg_op = 'DELETE' then
          delete from knowledge_lexemes k
            using (select agent_id, count(*) as n from changed group by agent_id) gone, knowledge_lexemes total
            where total.agent_id = gone.agent_id and total.lexeme = '' and total.chunks <= gone.n and k.agent_id = gone.agent_id;
        end if;
        insert into knowledge_lexemes as k (agent_id, lexeme, chunks)
          select c.agent_id, l.lexeme, sign * count(*)
          from changed c cross join lateral (select unnest(tsvector_to_array(c.tsv)) union all select '') l(lexeme)
          where sign > 0 or exists (select 1 from knowledge_lexemes t where t.agent_id = c.agent_id and t.lexeme = '')
          group by c.agent_id, l.lexeme
          order by c.agent_id, l.lexeme
          on conflict (agent_id, lexeme) do update set chunks = k.chunks + excluded.chunks;
        if tg_op = 'DELETE' then
          delete from knowledge_lexemes k
            where k.chunks <= 0 and (k.agent_id, k.lexeme) in (select c.agent_id, unnest(tsvector_to_array(c.tsv)) from changed c);
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger knowledge_lexemes_insert after insert on "knowledge_chunks"
      referencing new table as changed for each statement execute function knowledge_lexemes_count();`);
    this.addSql(`create trigger knowledge_lexemes_delete after delete on "knowledge_chunks"
      referencing old table as changed for each statement execute function knowledge_lexemes_count();`);
    this.addSql(`create function knowledge_full_text_ranking(of_agent bigint, lexeme_groups jsonb, wanted int)
      returns table (id bigint, rank bigint) language plpgsql stable set plan_cache_mode = force_custom_plan as $$
      #variable_conflict use_column
      declare
        found bigint[] := '{}';
        grp tsquery;
      begin
        for grp in select value::tsquery from jsonb_array_elements_text(lexeme_groups) loop
          exit when cardinality(found) >= wanted;
          found := found || array(
            select hit.id from (
              select c.id, ts_rank_cd(c.tsv, grp) as closeness from knowledge_chunks c
              where c.agent_id = of_agent and c.tsv @@ grp and c.id <> all(found) limit wanted) hit
            order by hit.closeness desc, hit.id);
        end loop;
        return query select f.id, f.rank from unnest(found[1:wanted]) with ordinality as f(id, rank);
      end $$;`);
    this.addSql(`insert into knowledge_lexemes (agent_id, lexeme, chunks)
      select c.agent_id, l.lexeme, count(*)
      from knowledge_chunks c cross join lateral (select unnest(tsvector_to_array(c.tsv)) union all select '') l(lexeme)
      group by c.agent_id, l.lexeme;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists knowledge_lexemes_insert on "knowledge_chunks";`);
    this.addSql(`drop trigger if exists knowledge_lexemes_delete on "knowledge_chunks";`);
    this.addSql(`drop function if exists knowledge_lexemes_count();`);
    this.addSql(`drop function if exists knowledge_full_text_ranking(bigint, jsonb, int);`);
    this.addSql(`drop table if exists "knowledge_lexemes";`);
  }

}
