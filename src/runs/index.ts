/**
 * The runs capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/runs/ (docs/architecture.md, "Rules").
 */
export { ApprovalListInput, ApprovalPathInput, ApproveInput, DenyInput } from './approval.schema.ts'
export * as approvals from './approvals.service.ts'
export { FINAL_EVENT_TYPES } from './run-log.ts'
export { createRunDriver } from './run-driver.ts'
export { RunManager } from './run-manager.ts'
export { Approval, IF_BUSY, RUN_INPUT_MAX, RunAgentInput, RunEvent, type RunEventRecord, RunEventsInput, RunPathInput, RunPromptInput, RunResult, RunThreadInput, toRunEvent, type TRunAgentInput, type IfBusy, type TApproval, type TRunPromptInput, type TRunResult, type TUsage } from './run.schema.ts'
export { type LinkedWorkflowsPort } from './runs.port.ts'
export * as runs from './runs.service.ts'
export { cancelEvaluationRuns, requireAgent, runAgent, runPrompt } from './runs.service.ts'
export { type WorkflowToolBinding, type WorkflowToolOutcome } from './workflow-tools.ts'
