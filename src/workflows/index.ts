/**
 * The workflows capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/workflows/ (docs/architecture.md, "Rules").
 */
export { WorkflowEngine } from './engine.ts'
export { linkedWorkflows, triggerShape, type TriggerShape } from './linked-workflows.ts'
export { triggerOf } from './node-types.ts'
export { resealWebhookSecrets, triggerWebhook } from './webhooks.service.ts'
export { ListWorkflowExecutionsInput, type TWorkflowExecutionDetail, WorkflowExecutionCounts, WorkflowExecutionCountsInput, WorkflowExecutionDetailResponse, WorkflowExecutionList, WorkflowExecutionPathInput, WorkflowExecutionResponse } from './workflow-execution.schema.ts'
export * as executions from './workflow-executions.service.ts'
export { generateWorkflow } from './workflow-generate.service.ts'
export { createWorkflowNodeServices } from './workflow-node-services.ts'
export { WorkflowNodeTypeList } from './workflow-node-type.schema.ts'
export * as nodeTypes from './workflow-node-types.service.ts'
export * as workflowRuns from './workflow-runs.service.ts'
export { run, runnableWorkflow } from './workflow-runs.service.ts'
export { shareWorkflow } from './workflow-shares.service.ts'
export { AgentWorkflow, checkGraphSize, CreateWorkflowInput, GenerateWorkflowInput, ListWorkflowsInput, RunWorkflowInput, ShareWorkflowInput, toWorkflowBase, type TWorkflowBase, UpdateWorkflowInput, WORKFLOW_FIELDS, WorkflowList, WorkflowPathInput, WorkflowResponse, type WorkflowRow } from './workflow.schema.ts'
export * as workflows from './workflows.service.ts'
