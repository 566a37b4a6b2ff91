/** Every entity, in one list for the ORM (docs/architecture.md, "Layout"). */
import type { EntitySchema } from '@mikro-orm/core'
import { AccessToken } from './access-token.entity.ts'
import { Account } from './account.entity.ts'
import { AgentCategory, AgentFile, AgentTool, AgentWorkflow, WorkflowCategory } from './agent-links.entity.ts'
import { Agent } from './agent.entity.ts'
import { AgentVersion, OutboxEvent } from './agent-version.entity.ts'
import { Category } from './category.entity.ts'
import { Dataset, DatasetItem } from './dataset.entity.ts'
import { Evaluation, EvaluationResult } from './evaluation.entity.ts'
import { CommandRoomTask, CommandRoomTaskFiring } from './command-room.entity.ts'
import { Favorite } from './favorite.entity.ts'
import { KnowledgeChunk, KnowledgeDocument } from './knowledge.entity.ts'
import { LargeLanguageModel } from './large-language-model.entity.ts'
import { Media } from './media.entity.ts'
import { Memory } from './memory.entity.ts'
import { Message } from './message.entity.ts'
import { OAuthClient, OAuthCode, OAuthRefreshToken } from './oauth.entity.ts'
import { Prompt } from './prompt.entity.ts'
import { Provider } from './provider.entity.ts'
import { Run, RunApproval, RunEvent } from './run.entity.ts'
import { Share } from './share.entity.ts'
import { OidcLoginCode, OidcState, UserIdentity } from './sso.entity.ts'
import { Thread } from './thread.entity.ts'
import { Tool } from './tool.entity.ts'
import { User, Workspace } from './user-workspace.entity.ts'
import { Budget, BudgetAlert, UsageDaily } from './usage.entity.ts'
import { WorkflowExecution, WorkflowExecutionData } from './workflow-execution.entity.ts'
import { WorkspaceMember } from './workspace-member.entity.ts'
import { WebhookDelivery, WebhookEndpoint } from './webhook.entity.ts'
import { IdempotencyKey } from './idempotency-key.entity.ts'
import { Workflow, WorkflowSchedule } from './workflow.entity.ts'

export {
  AccessToken,
  Account,
  Agent,
  AgentCategory,
  AgentFile,
  AgentTool,
  AgentVersion,
  AgentWorkflow,
  Budget,
  BudgetAlert,
  Category,
  CommandRoomTask,
  CommandRoomTaskFiring,
  Dataset,
  DatasetItem,
  Evaluation,
  EvaluationResult,
  Favorite,
  IdempotencyKey,
  KnowledgeChunk,
  KnowledgeDocument,
  LargeLanguageModel,
  Media,
  Memory,
  Message,
  OAuthClient,
  OAuthCode,
  OAuthRefreshToken,
  OidcLoginCode,
  OidcState,
  OutboxEvent,
  Prompt,
  Provider,
  Run,
  RunApproval,
  RunEvent,
  Share,
  Thread,
  Tool,
  UsageDaily,
  User,
  UserIdentity,
  WebhookDelivery,
  WebhookEndpoint,
  Workflow,
  WorkflowCategory,
  WorkflowExecution,
  WorkflowExecutionData,
  WorkflowSchedule,
  Workspace,
  WorkspaceMember,
}
export * from './access-token.entity.ts'
export * from './account.entity.ts'
export * from './agent-links.entity.ts'
export * from './agent.entity.ts'
export * from './agent-version.entity.ts'
export * from './category.entity.ts'
export * from './columns.ts'
export * from './ownership.ts'
export * from './command-room.entity.ts'
export * from './dataset.entity.ts'
export * from './evaluation.entity.ts'
export * from './favorite.entity.ts'
export * from './idempotency-key.entity.ts'
export * from './knowledge.entity.ts'
export * from './large-language-model.entity.ts'
export * from './media.entity.ts'
export * from './memory.entity.ts'
export * from './message.entity.ts'
export * from './oauth.entity.ts'
export * from './prompt.entity.ts'
export * from './provider.entity.ts'
export * from './run.entity.ts'
export * from './share.entity.ts'
export * from './sso.entity.ts'
export * from './thread.entity.ts'
export * from './tool.entity.ts'
export * from './usage.entity.ts'
export * from './webhook.entity.ts'
export * from './workflow-execution.entity.ts'
export * from './workflow.entity.ts'
export * from './workspace-member.entity.ts'
export * from './user-workspace.entity.ts'

/**
 * Every entity definition as one type, for queries typed from the entities (src/platform/db.ts,
 * `Database`). The same list as {@link entities}: an entity missing here has no table in typed
 * queries, so the type check of the query that needs it fails.
 */
export type EntityDefinition =
  | typeof User
  | typeof Workspace
  | typeof WorkspaceMember
  | typeof AccessToken
  | typeof Share
  | typeof Category
  | typeof Provider
  | typeof Account
  | typeof Tool
  | typeof Workflow
  | typeof Agent
  | typeof AgentTool
  | typeof AgentWorkflow
  | typeof AgentFile
  | typeof AgentCategory
  | typeof WorkflowCategory
  | typeof Favorite
  | typeof Media
  | typeof Prompt
  | typeof Thread
  | typeof Run
  | typeof RunEvent
  | typeof RunApproval
  | typeof Message
  | typeof Memory
  | typeof LargeLanguageModel
  | typeof WorkflowExecution
  | typeof WorkflowExecutionData
  | typeof WorkflowSchedule
  | typeof KnowledgeDocument
  | typeof KnowledgeChunk
  | typeof CommandRoomTask
  | typeof CommandRoomTaskFiring
  | typeof UsageDaily
  | typeof Budget
  | typeof BudgetAlert
  | typeof AgentVersion
  | typeof OutboxEvent
  | typeof WebhookEndpoint
  | typeof WebhookDelivery
  | typeof IdempotencyKey
  | typeof UserIdentity
  | typeof OidcState
  | typeof OidcLoginCode
  | typeof OAuthClient
  | typeof OAuthCode
  | typeof OAuthRefreshToken
  | typeof Dataset
  | typeof DatasetItem
  | typeof Evaluation
  | typeof EvaluationResult

/** Typed as the ORM takes them: the inferred tuple type is too long for declaration emit (docs/api/clients.md). */
export const entities: EntitySchema[] = [
  User,
  Workspace,
  WorkspaceMember,
  AccessToken,
  Share,
  Category,
  Provider,
  Account,
  Tool,
  Workflow,
  Agent,
  AgentTool,
  AgentWorkflow,
  AgentFile,
  AgentCategory,
  WorkflowCategory,
  Favorite,
  Media,
  Prompt,
  Thread,
  Run,
  RunApproval,
  RunEvent,
  Message,
  Memory,
  LargeLanguageModel,
  WorkflowExecution,
  WorkflowExecutionData,
  WorkflowSchedule,
  KnowledgeDocument,
  KnowledgeChunk,
  CommandRoomTask,
  CommandRoomTaskFiring,
  UsageDaily,
  Budget,
  BudgetAlert,
  AgentVersion,
  OutboxEvent,
  WebhookEndpoint,
  WebhookDelivery,
  IdempotencyKey,
  UserIdentity,
  OidcState,
  OidcLoginCode,
  OAuthClient,
  OAuthCode,
  OAuthRefreshToken,
  Dataset,
  DatasetItem,
  Evaluation,
  EvaluationResult,
]
