/**
 * The audit log's resource type of each resource table (docs/api/audit.md, "Actions"): the
 * singular the action names start with (`agents` -> `agent`, so `agent.share`).
 */
const TYPES: Record<string, string> = {
  agents: 'agent',
  workflows: 'workflow',
  prompts: 'prompt',
  tools: 'tool',
  accounts: 'account',
  providers: 'provider',
  models: 'model',
  threads: 'thread',
  messages: 'message',
  memories: 'memory',
  command_room_tasks: 'command_room_task',
  datasets: 'dataset',
  dataset_items: 'dataset_item',
}

/** The resource type of `table`; the table name itself for one not listed. */
export const resourceType = (table: string): string => TYPES[table] ?? table
