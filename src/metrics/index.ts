/**
 * The metrics capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/metrics/ (docs/architecture.md, "Rules").
 */
export { dateBounds, nowMicros } from './metrics.query.ts'
export { AgentMetricsInput, DateOnly, dateOrderRule, ExecutionMetricsInput, MessageMetricsInput, MetricsResponse, ThreadMetricsInput, WorkflowMetricsInput, WorkspaceMetricsInput, WorkspaceMetricsResponse } from './metrics.schema.ts'
export * as metrics from './metrics.service.ts'
