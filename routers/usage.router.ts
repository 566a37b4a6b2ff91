/**
 * Usage and budgets (docs/api/usage-and-budgets.md): the workspace's model usage, and the
 * spending limits that block or alert on it.
 */
import { z } from 'zod'
import {
  budgets,
  Budget,
  BudgetEnvelope,
  BudgetListInput,
  BudgetPathInput,
  CreateBudgetInput,
  UpdateBudgetInput,
  usage,
  UsageAnswer,
  UsageInput,
} from '../src/usage/index.ts'
import { paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const usageTags = ['Usage']
const tags = ['Budgets']

export const usageRouter = router({
  summary: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/usage',
        tags: usageTags,
        summary: 'Model usage and cost of the workspace, grouped by period, agent, user, model or access token',
        protect: true,
      },
    })
    .input(UsageInput)
    .output(UsageAnswer)
    .query(({ ctx, input }) => usage(ctx, input)),
})

export const budgetsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/budgets', tags, summary: "The workspace's budgets with their spend", protect: true } })
    .input(BudgetListInput)
    .output(paginated(Budget))
    .query(({ ctx, input }) => budgets.list(ctx, input)),

  create: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/budgets', tags, summary: 'Create a budget (owners and admins)', protect: true },
      successStatus: 201,
    })
    .input(CreateBudgetInput)
    .output(BudgetEnvelope)
    .mutation(({ ctx, input }) => budgets.create(ctx, input)),

  retrieve: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/budgets/{budget_uuid}', tags, summary: 'Retrieve a budget with its spend', protect: true },
    })
    .input(BudgetPathInput)
    .output(BudgetEnvelope)
    .query(({ ctx, input }) => budgets.retrieve(ctx, input.budget_uuid)),

  update: workspaceProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/v1/budgets/{budget_uuid}',
        tags,
        summary: 'Change a budget (owners and admins)',
        protect: true,
      },
    })
    .input(UpdateBudgetInput)
    .output(BudgetEnvelope)
    .mutation(({ ctx, input }) => budgets.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/budgets/{budget_uuid}',
        tags,
        summary: 'Delete a budget (owners and admins)',
        protect: true,
      },
      successStatus: 204,
    })
    .input(BudgetPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => budgets.remove(ctx, input.budget_uuid)),
})
