/** The workflow node type catalogue (docs/api/workflows.md): `GET /api/v1/workflow-node-types`. */
import { z } from 'zod'
import { WorkflowNodeTypeList } from '../src/workflows/index.ts'
import { nodeTypes } from '../src/workflows/index.ts'
import { authedProcedure, router } from '../src/trpc/init.ts'

export const workflowNodeTypesRouter = router({
  list: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/workflow-node-types',
        tags: ['Workflows'],
        summary: 'The node types a workflow may use, with their parameters as JSON Schema',
        protect: true,
      },
    })
    .input(z.void())
    .output(WorkflowNodeTypeList)
    .query(() => nodeTypes.list()),
})
