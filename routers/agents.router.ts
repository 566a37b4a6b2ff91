/**
 * Agents (specification: "Agent (response shape)", "Update an Agent"; docs/api/tenancy.md and docs/api/resources.md):
 * list, the leaderboard (docs/api/generate-and-leaderboard.md), create, generate, import and
 * export (docs/api/versions.md), retrieve, update, delete, share, favourite.
 */
import { z } from 'zod'
import { agents } from '../src/agents/index.ts'
import { generateAgent } from '../src/agents/index.ts'
import { leaderboard } from '../src/agents/index.ts'
import {
  AgentPathInput,
  CreateAgentInput,
  GenerateAgentInput,
  ListAgentsInput,
  RetrieveAgentInput,
  ShareAgentInput,
  UpdateAgentInput,
} from '../src/agents/index.ts'
import { Agent } from '../src/agents/index.ts'
import { LeaderboardInput, LeaderboardResponse } from '../src/agents/index.ts'
import { AgentVersion, AgentVersionDetail, AgentVersionPathInput, AnnotateAgentVersionInput, ListAgentVersionsInput, versions } from '../src/agents/index.ts'
import { AgentDocument, ExportAgentInput, ImportAgentInput, ImportAgentResponse, portable } from '../src/agents/index.ts'
import { envelope, paginated } from '../src/access/wire.ts'
import { cachedWorkspaceProcedure } from '../src/trpc/cache.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const AgentResponse = envelope(Agent)
const tags = ['Agents']
const path = '/api/v1/agents/{agent_uuid}'

export const agentsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/agents', tags, summary: 'Agents the caller may see, filtered and paginated', protect: true } })
    .input(ListAgentsInput)
    .output(paginated(Agent))
    .query(({ ctx, input }) => agents.list(ctx, input)),

  // Before the `{agent_uuid}` routes: declared after them, `leaderboard` would be read as a uuid.
  // Cached 5 minutes like the metrics (src/trpc/cache.ts): a hit runs neither parser nor resolver.
  leaderboard: cachedWorkspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/agents/leaderboard',
        tags,
        summary: 'Agents ranked by their runs of a period (cached 5 minutes)',
        protect: true,
      },
    })
    .input(LeaderboardInput)
    .output(LeaderboardResponse)
    .query(({ ctx, input }) => leaderboard.leaderboard(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/agents', tags, summary: 'Create an agent', protect: true }, successStatus: 201 })
    .input(CreateAgentInput)
    .output(AgentResponse)
    .mutation(({ ctx, input }) => agents.create(ctx, input)),

  // A static path: declared before every `{agent_uuid}` procedure, so `generate` is never read as a uuid.
  generate: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/agents/generate',
        tags,
        summary: "Generate an agent from a description with a workspace's model",
        protect: true,
      },
      successStatus: 201,
      callsModel: true,
    })
    .input(GenerateAgentInput)
    .output(AgentResponse)
    // A client that disconnects stops the model call: nothing is stored (docs/api/generate-and-leaderboard.md).
    .mutation(({ ctx, input, signal }) => generateAgent(ctx, input, signal)),

  // A static path too: declared before `retrieve` and every other `{agent_uuid}` procedure.
  import: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/agents/import', tags, summary: 'Make an agent, its tools, workflows and knowledge from a portable document', protect: true },
      successStatus: 201,
    })
    .input(ImportAgentInput)
    .output(ImportAgentResponse)
    .mutation(({ ctx, input }) => portable.importAgent(ctx, input)),

  // The document itself, not in `data`, as a download (`Content-Disposition: attachment`).
  export: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${path}/export`, tags, summary: 'An agent as a portable document (read permission)', protect: true } })
    .input(ExportAgentInput)
    .output(AgentDocument)
    .query(({ ctx, input }) => portable.exportAgent(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path, tags, summary: 'Retrieve an agent with its tools, workflows and shares', protect: true } })
    .input(RetrieveAgentInput)
    .output(AgentResponse)
    .query(({ ctx, input }) => agents.retrieve(ctx, input.agent_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path, tags, summary: 'Update an agent (write permission)', protect: true } })
    .input(UpdateAgentInput)
    .output(AgentResponse)
    .mutation(({ ctx, input }) => agents.update(ctx, input)),

  delete: workspaceProcedure
    .meta({ openapi: { method: 'DELETE', path, tags, summary: 'Delete an agent (admin permission)', protect: true }, successStatus: 204 })
    .input(AgentPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => agents.remove(ctx, input.agent_uuid)),

  share: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: `${path}/share`, tags, summary: 'Share an agent with a user or a workspace, or remove a share', protect: true } })
    .input(ShareAgentInput)
    .output(AgentResponse)
    .mutation(({ ctx, input }) => agents.share(ctx, input)),

  favorite: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: `${path}/favorite`, tags, summary: "Add an agent to the caller's favourites", protect: true }, successStatus: 204 })
    .input(AgentPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => agents.favorite(ctx, input.agent_uuid)),

  unfavorite: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: `${path}/favorite`, tags, summary: "Remove an agent from the caller's favourites", protect: true },
      successStatus: 204,
    })
    .input(AgentPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => agents.unfavorite(ctx, input.agent_uuid)),

  // Versions (docs/api/versions.md).
  versions: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${path}/versions`, tags, summary: "An agent's versions, newest first", protect: true } })
    .input(ListAgentVersionsInput)
    .output(paginated(AgentVersion))
    .query(({ ctx, input }) => versions.list(ctx, input)),

  version: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${path}/versions/{version}`, tags, summary: 'One version of an agent with its snapshot', protect: true } })
    .input(AgentVersionPathInput)
    .output(envelope(AgentVersionDetail))
    .query(({ ctx, input }) => versions.retrieve(ctx, input)),

  annotateVersion: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: `${path}/versions/{version}`, tags, summary: 'Set or remove the note of a version (write permission)', protect: true } })
    .input(AnnotateAgentVersionInput)
    .output(envelope(AgentVersion))
    .mutation(({ ctx, input }) => versions.annotate(ctx, input)),

  restoreVersion: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: `${path}/versions/{version}/restore`, tags, summary: "Make a version's snapshot the agent's current state (write permission)", protect: true },
    })
    .input(AgentVersionPathInput)
    .output(AgentResponse)
    .mutation(({ ctx, input }) => agents.restore(ctx, input)),
})
