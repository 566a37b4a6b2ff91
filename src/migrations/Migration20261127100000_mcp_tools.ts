import { Migration } from '@mikro-orm/migrations';

/**
 * Tools of type `mcp` (docs/api/mcp-tools.md): the type check admits `mcp`, and `allowed_tools`
 * holds the names of an MCP server's tools an agent is offered (null: all of them).
 */
export class Migration20261127100000_mcp_tools extends Migration {

  override name = 'Migration20261127100000_mcp_tools';

  override up(): void | Promise<void> {
    this.addSql(`alter table "tools" drop constraint if exists "tools_type_check";`);
    this.addSql(`alter table "tools" add constraint "tools_type_check" check ("type" in ('api', 'mcp'));`);
    this.addSql(`alter table "tools" add column "allowed_tools" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "tools" where "type" = 'mcp';`);
    this.addSql(`alter table "tools" drop column "allowed_tools";`);
    this.addSql(`alter table "tools" drop constraint if exists "tools_type_check";`);
    this.addSql(`alter table "tools" add constraint "tools_type_check" check ("type" in ('api'));`);
  }

}
