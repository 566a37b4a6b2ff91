/** Workspaces and their members (specification: "Workspace"; docs/api/tenancy.md and docs/api/resources.md). */
import { z } from 'zod'
import { members } from '../src/tenancy/index.ts'
import { workspaces } from '../src/tenancy/index.ts'
import { AddMemberInput, MemberList, MemberListInput, MemberPathInput, MemberResponse, UpdateMemberInput } from '../src/tenancy/index.ts'
import { Workspace } from '../src/access/user-workspace.schema.ts'
import { CreateWorkspaceInput, UpdateWorkspaceInput } from '../src/access/user-workspace.schema.ts'
import { envelope, paginated, pageQuery, sortParam, text, withParam } from '../src/access/wire.ts'
import { authedProcedure, router } from '../src/trpc/init.ts'

const WorkspaceResponse = envelope(Workspace)
const WorkspaceUuid = z.strictObject({ workspace_uuid: z.uuid() })
const tags = ['Workspaces']

export const workspacesRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/workspaces', tags, summary: 'Workspaces the caller belongs to', protect: true } })
    .input(
      z.strictObject({
        ...pageQuery,
        sort: sortParam(workspaces.WORKSPACE_SORTS, '-created_at'),
        with: withParam(workspaces.WORKSPACE_RELATIONS).optional(),
        search: text(255).optional(),
      }).prefault({}),
    )
    .output(paginated(Workspace))
    .query(({ ctx, input }) => workspaces.list(ctx, input)),

  create: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/workspaces', tags, summary: 'Create a workspace', protect: true }, successStatus: 201 })
    .input(CreateWorkspaceInput)
    .output(WorkspaceResponse)
    .mutation(({ ctx, input }) => workspaces.create(ctx, input)),

  retrieve: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/workspaces/{workspace_uuid}', tags, summary: 'Retrieve a workspace', protect: true } })
    .input(WorkspaceUuid)
    .output(WorkspaceResponse)
    .query(({ ctx, input }) => workspaces.retrieve(ctx, input.workspace_uuid)),

  update: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/v1/workspaces/{workspace_uuid}', tags, summary: 'Update a workspace (owner or admin)', protect: true } })
    .input(UpdateWorkspaceInput)
    .output(WorkspaceResponse)
    .mutation(({ ctx, input }) => workspaces.update(ctx, input)),

  delete: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/workspaces/{workspace_uuid}', tags, summary: 'Delete a workspace (owner)', protect: true },
      successStatus: 204,
    })
    .input(WorkspaceUuid)
    .output(z.void())
    .mutation(({ ctx, input }) => workspaces.remove(ctx, input.workspace_uuid)),

  members: router({
    list: authedProcedure
      .meta({ openapi: { method: 'GET', path: '/api/v1/workspaces/{workspace_uuid}/members', tags, summary: 'List members', protect: true } })
      .input(MemberListInput)
      .output(MemberList)
      .query(({ ctx, input }) => members.list(ctx, input)),

    add: authedProcedure
      .meta({
        openapi: { method: 'POST', path: '/api/v1/workspaces/{workspace_uuid}/members', tags, summary: 'Add an existing user as a member', protect: true },
        successStatus: 201,
      })
      .input(AddMemberInput)
      .output(MemberResponse)
      .mutation(({ ctx, input }) => members.add(ctx, input)),

    update: authedProcedure
      .meta({ openapi: { method: 'PUT', path: '/api/v1/workspaces/{workspace_uuid}/members/{user_id}', tags, summary: "Change a member's role", protect: true } })
      .input(UpdateMemberInput)
      .output(MemberResponse)
      .mutation(({ ctx, input }) => members.update(ctx, input)),

    remove: authedProcedure
      .meta({
        openapi: { method: 'DELETE', path: '/api/v1/workspaces/{workspace_uuid}/members/{user_id}', tags, summary: 'Remove a member, or leave', protect: true },
        successStatus: 204,
      })
      .input(MemberPathInput)
      .output(z.void())
      .mutation(({ ctx, input }) => members.remove(ctx, input)),
  }),
})
