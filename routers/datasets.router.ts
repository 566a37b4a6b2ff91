/**
 * Datasets and their items (docs/api/evaluations.md, "Datasets"): the cases evaluations run on.
 * A dataset is seen like a prompt; its items follow its access rules.
 */
import { z } from 'zod'
import {
  CreateDatasetInput,
  CreateDatasetItemsInput,
  DatasetItemList,
  DatasetItemResponse,
  DatasetItemsResponse,
  DatasetList,
  DatasetResponse,
  datasetItems,
  datasets,
  DeleteDatasetInput,
  DeleteDatasetItemInput,
  ListDatasetItemsInput,
  ListDatasetsInput,
  RetrieveDatasetInput,
  UpdateDatasetInput,
  UpdateDatasetItemInput,
} from '../src/evaluations/index.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Datasets']
const datasetPath = '/api/v1/datasets/{dataset_uuid}'
const itemPath = '/api/v1/dataset-items/{item_uuid}'

const itemsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${datasetPath}/items`, tags, summary: "A dataset's items, oldest first", protect: true } })
    .input(ListDatasetItemsInput)
    .output(DatasetItemList)
    .query(({ ctx, input }) => datasetItems.list(ctx, input)),

  create: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: `${datasetPath}/items`, tags, summary: 'Add 1 to 1,000 items to a dataset, from the body or from JSONL uploads (write permission)', protect: true },
      successStatus: 201,
    })
    .input(CreateDatasetItemsInput)
    .output(DatasetItemsResponse)
    .mutation(({ ctx, input }) => datasetItems.add(ctx, input)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: itemPath, tags, summary: "Change a dataset item's input, expected output or metadata (write permission)", protect: true } })
    .input(UpdateDatasetItemInput)
    .output(DatasetItemResponse)
    .mutation(({ ctx, input }) => datasetItems.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: itemPath, tags, summary: 'Delete a dataset item (write permission)', protect: true },
      successStatus: 204,
    })
    .input(DeleteDatasetItemInput)
    .output(z.void())
    .mutation(({ ctx, input }) => datasetItems.remove(ctx, input.item_uuid)),
})

export const datasetsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/datasets', tags, summary: 'Datasets the caller may see in the workspace', protect: true } })
    .input(ListDatasetsInput)
    .output(DatasetList)
    .query(({ ctx, input }) => datasets.list(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/datasets', tags, summary: 'Create a dataset', protect: true }, successStatus: 201 })
    .input(CreateDatasetInput)
    .output(DatasetResponse)
    .mutation(({ ctx, input }) => datasets.create(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: datasetPath, tags, summary: 'Retrieve a dataset', protect: true } })
    .input(RetrieveDatasetInput)
    .output(DatasetResponse)
    .query(({ ctx, input }) => datasets.retrieve(ctx, input.dataset_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: datasetPath, tags, summary: 'Update a dataset (write permission)', protect: true } })
    .input(UpdateDatasetInput)
    .output(DatasetResponse)
    .mutation(({ ctx, input }) => datasets.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: datasetPath, tags, summary: 'Delete a dataset (admin permission)', protect: true },
      successStatus: 204,
    })
    .input(DeleteDatasetInput)
    .output(z.void())
    .mutation(({ ctx, input }) => datasets.remove(ctx, input.dataset_uuid)),

  items: itemsRouter,
})
