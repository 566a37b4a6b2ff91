/**
 * The evaluations capability's public surface: the only module routers, the HTTP host, the runtime
 * and other capabilities import from src/evaluations/ (docs/architecture.md, "Rules";
 * docs/api/evaluations.md).
 */

// Datasets and their items (docs/api/evaluations.md, "Datasets").
export {
  CreateDatasetInput,
  CreateDatasetItemsInput,
  DatasetItemList,
  DatasetItemResponse,
  DatasetItemsResponse,
  DatasetList,
  DatasetResponse,
  DeleteDatasetInput,
  DeleteDatasetItemInput,
  ListDatasetItemsInput,
  ListDatasetsInput,
  RetrieveDatasetInput,
  UpdateDatasetInput,
  UpdateDatasetItemInput,
} from './dataset.schema.ts'
export * as datasetItems from './dataset-items.service.ts'
export * as datasets from './datasets.service.ts'

// Evaluations (docs/api/evaluations.md, "Evaluations").
export { EvaluationEngine } from './engine.ts'
export {
  CompareEvaluationsInput,
  CreateEvaluationInput,
  EvaluationComparison,
  EvaluationEnvelope,
  EvaluationList,
  EvaluationPathInput,
  EvaluationResultList,
  EvaluationResultsInput,
  ListEvaluationsInput,
} from './evaluation.schema.ts'
export * as evaluations from './evaluations.service.ts'
