/** Every committed migration, in order; listed explicitly so no folder scanning happens at start. */
import type { Constructor } from '@mikro-orm/core'
import type { Migration } from '@mikro-orm/migrations'
import { Migration20261121093927 } from './Migration20261121093927_foundation.ts'
import { Migration20261121103655_resources } from './Migration20261121103655_resources.ts'
import { Migration20261121120939_metrics } from './Migration20261121120939_metrics.ts'
import { Migration20261121135951_runs } from './Migration20261121135951_runs.ts'
import { Migration20261121153411_deleted_indexes } from './Migration20261121153411_deleted_indexes.ts'
import { Migration20261121162322_workflow_engine } from './Migration20261121162322_workflow_engine.ts'
import { Migration20261121215458_deleted_threads_index } from './Migration20261121215458_deleted_threads_index.ts'
import { Migration20261121224447_messages_run_id_index } from './Migration20261121224447_messages_run_id_index.ts'
import { Migration20261125144244_run_heartbeats } from './Migration20261125144244_run_heartbeats.ts'
import { Migration20261125145020_execution_resume } from './Migration20261125145020_execution_resume.ts'
import { Migration20261125170000_knowledge } from './Migration20261125170000_knowledge.ts'
import { Migration20261126090000_command_room } from './Migration20261126090000_command_room.ts'
import { Migration20261126100000_workflow_schedules } from './Migration20261126100000_workflow_schedules.ts'
import { Migration20261126120000_leaderboard } from './Migration20261126120000_leaderboard.ts'
import { Migration20261126130000_run_writes } from './Migration20261126130000_run_writes.ts'
import { Migration20261127100000_mcp_tools } from './Migration20261127100000_mcp_tools.ts'
import { Migration20261128110000_runs_that_wait } from './Migration20261128110000_runs_that_wait.ts'
import { Migration20261128150000_runs_survive } from './Migration20261128150000_runs_survive.ts'
import { Migration20261128170000_usage_budgets } from './Migration20261128170000_usage_budgets.ts'
import { Migration20261128190000_agent_versions } from './Migration20261128190000_agent_versions.ts'
import { Migration20261128200000_webhooks } from './Migration20261128200000_webhooks.ts'
import { Migration20261128203000_idempotency } from './Migration20261128203000_idempotency.ts'
import { Migration20261129000000_webhook_leases } from './Migration20261129000000_webhook_leases.ts'
import { Migration20261129010000_sso } from './Migration20261129010000_sso.ts'
import { Migration20261129020000_audit_events } from './Migration20261129020000_audit_events.ts'
import { Migration20261129030000_oauth } from './Migration20261129030000_oauth.ts'
import { Migration20261129140000_knowledge_sync } from './Migration20261129140000_knowledge_sync.ts'
import { Migration20261129160000_knowledge_crawl } from './Migration20261129160000_knowledge_crawl.ts'
import { Migration20261129120000_trace_ids } from './Migration20261129120000_trace_ids.ts'
import { Migration20261129170000_knowledge_retrieval } from './Migration20261129170000_knowledge_retrieval.ts'
import { Migration20261129180000_datasets } from './Migration20261129180000_datasets.ts'

export const migrationsList: { name: string; class: Constructor<Migration> }[] = [
  { name: 'Migration20261121093927', class: Migration20261121093927 },
  { name: 'Migration20261121103655_resources', class: Migration20261121103655_resources },
  { name: 'Migration20261121120939_metrics', class: Migration20261121120939_metrics },
  { name: 'Migration20261121135951_runs', class: Migration20261121135951_runs },
  { name: 'Migration20261121153411_deleted_indexes', class: Migration20261121153411_deleted_indexes },
  { name: 'Migration20261121162322_workflow_engine', class: Migration20261121162322_workflow_engine },
  { name: 'Migration20261121215458_deleted_threads_index', class: Migration20261121215458_deleted_threads_index },
  { name: 'Migration20261121224447_messages_run_id_index', class: Migration20261121224447_messages_run_id_index },
  { name: 'Migration20261125144244_run_heartbeats', class: Migration20261125144244_run_heartbeats },
  { name: 'Migration20261125145020_execution_resume', class: Migration20261125145020_execution_resume },
  { name: 'Migration20261125170000_knowledge', class: Migration20261125170000_knowledge },
  { name: 'Migration20261126090000_command_room', class: Migration20261126090000_command_room },
  { name: 'Migration20261126100000_workflow_schedules', class: Migration20261126100000_workflow_schedules },
  { name: 'Migration20261126120000_leaderboard', class: Migration20261126120000_leaderboard },
  { name: 'Migration20261126130000_run_writes', class: Migration20261126130000_run_writes },
  { name: 'Migration20261127100000_mcp_tools', class: Migration20261127100000_mcp_tools },
  { name: 'Migration20261128110000_runs_that_wait', class: Migration20261128110000_runs_that_wait },
  { name: 'Migration20261128150000_runs_survive', class: Migration20261128150000_runs_survive },
  { name: 'Migration20261128170000_usage_budgets', class: Migration20261128170000_usage_budgets },
  { name: 'Migration20261128190000_agent_versions', class: Migration20261128190000_agent_versions },
  { name: 'Migration20261128200000_webhooks', class: Migration20261128200000_webhooks },
  { name: 'Migration20261128203000_idempotency', class: Migration20261128203000_idempotency },
  { name: 'Migration20261129000000_webhook_leases', class: Migration20261129000000_webhook_leases },
  { name: 'Migration20261129010000_sso', class: Migration20261129010000_sso },
  { name: 'Migration20261129020000_audit_events', class: Migration20261129020000_audit_events },
  { name: 'Migration20261129030000_oauth', class: Migration20261129030000_oauth },
  { name: 'Migration20261129120000_trace_ids', class: Migration20261129120000_trace_ids },
  { name: 'Migration20261129140000_knowledge_sync', class: Migration20261129140000_knowledge_sync },
  { name: 'Migration20261129160000_knowledge_crawl', class: Migration20261129160000_knowledge_crawl },
  { name: 'Migration20261129170000_knowledge_retrieval', class: Migration20261129170000_knowledge_retrieval },
  { name: 'Migration20261129180000_datasets', class: Migration20261129180000_datasets },
]
