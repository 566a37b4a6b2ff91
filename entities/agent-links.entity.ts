/**
 * The pivot tables of an agent: its tools (with the bound account), its workflows, its
 * knowledge files and its categories. `position` keeps the order the caller sent.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { Account } from './account.entity.ts'
import { Agent } from './agent.entity.ts'
import { Category } from './category.entity.ts'
import { Media } from './media.entity.ts'
import { Tool } from './tool.entity.ts'
import { Workflow } from './workflow.entity.ts'

const agent = () =>
  p.manyToOne(Agent)
    .fieldName('agent_id')
    .deleteRule('cascade')

/** A tool an agent may call, with the account it calls it with (`pivot_account`). */
export const AgentTool = defineEntity({
  name: 'AgentTool',
  tableName: 'agent_tools',
  uniques: [{ properties: ['agent', 'tool'] }],
  indexes: [{ properties: ['tool'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    agent,
    tool: () =>
      p.manyToOne(Tool)
        .fieldName('tool_id')
        .deleteRule('cascade'),
    account: () =>
      p.manyToOne(Account)
        .nullable()
        .fieldName('account_id')
        .deleteRule('set null'),
    position: p.integer().default(0),
    createdAt: p.datetime().fieldName('created_at').onCreate(() => new Date()),
  },
})

/** A workflow an agent may trigger. */
export const AgentWorkflow = defineEntity({
  name: 'AgentWorkflow',
  tableName: 'agent_workflows',
  uniques: [{ properties: ['agent', 'workflow'] }],
  indexes: [{ properties: ['workflow'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    agent,
    workflow: () =>
      p.manyToOne(Workflow)
        .fieldName('workflow_id')
        .deleteRule('cascade'),
    position: p.integer().default(0),
    createdAt: p.datetime().fieldName('created_at').onCreate(() => new Date()),
  },
})

/** An uploaded file attached to an agent as knowledge (`file.keys`, docs/api/resources.md). */
export const AgentFile = defineEntity({
  name: 'AgentFile',
  tableName: 'agent_files',
  uniques: [{ properties: ['agent', 'media'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    agent,
    media: () =>
      p.manyToOne(Media)
        .fieldName('media_id')
        .deleteRule('cascade'),
    position: p.integer().default(0),
    createdAt: p.datetime().fieldName('created_at').onCreate(() => new Date()),
  },
})

/** A category of an agent. */
export const AgentCategory = defineEntity({
  name: 'AgentCategory',
  tableName: 'agent_categories',
  uniques: [{ properties: ['agent', 'category'] }],
  indexes: [{ properties: ['category'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    agent,
    category: () =>
      p.manyToOne(Category)
        .fieldName('category_id')
        .deleteRule('cascade'),
  },
})

/** A category of a workflow. */
export const WorkflowCategory = defineEntity({
  name: 'WorkflowCategory',
  tableName: 'workflow_categories',
  uniques: [{ properties: ['workflow', 'category'] }],
  indexes: [{ properties: ['category'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    workflow: () =>
      p.manyToOne(Workflow)
        .fieldName('workflow_id')
        .deleteRule('cascade'),
    category: () =>
      p.manyToOne(Category)
        .fieldName('category_id')
        .deleteRule('cascade'),
  },
})

export type IAgentTool = InferEntity<typeof AgentTool>
export type IAgentWorkflow = InferEntity<typeof AgentWorkflow>
export type IAgentFile = InferEntity<typeof AgentFile>
