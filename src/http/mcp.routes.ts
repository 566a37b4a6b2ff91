/**
 * The MCP server (docs/api/mcp.md): Model Context Protocol over Streamable HTTP at `/mcp`, with
 * the official SDK's server and transport. The tools and what calling them does are
 * src/interop/mcp-server.service.ts; this plugin authenticates, and hands each request to the SDK.
 *
 * Stateless, the SDK's documented pattern for API-style servers: every `POST /mcp` gets a new
 * server and transport (`sessionIdGenerator: undefined`), so any API process can answer any
 * request and nothing is kept between them; the tools are read again on each `tools/list` and
 * `tools/call`. With no session there is no stream for server-sent notifications, so `GET` and
 * `DELETE` answer 405 (the specification allows it), and the SDK's clients carry on without.
 *
 * Authentication is the bearer token of the REST API, checked as the plain routes check it
 * (./route-auth.ts) before the SDK sees the request: a missing or bad token is an HTTP 401 with
 * `WWW-Authenticate: Bearer resource_metadata="..."`, from which an OAuth-only MCP client finds
 * this service's authorization server (./oauth.routes.ts) and obtains a token. A read-only token may list the tools;
 * calling one is a write (the service refuses it as an error result).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../platform/errors.ts'
import { callTool, listTools, UnknownToolError } from '../interop/index.ts'
import { oauth } from '../oauth/index.ts'
import type { Config } from '../platform/config.ts'
import type { ResourceCtx } from '../context.ts'
import { errorBody, handleRouteError } from './errors.ts'
import type { CreateContext } from './request-context.ts'
import { authorize, contextOf } from './route-auth.ts'

/** What the routes need from the host. */
export interface McpRoutesOptions {
  createContext: CreateContext
  config: Config
}

/** The server's name and version in the `initialize` answer. */
const SERVER_INFO = { name: 'agent-workspace', version: '1.0.0' }

const INSTRUCTIONS =
  'Each tool runs one of your agents, prompts or active workflows in this workspace, as you, and stores the run or ' +
  'execution like any other. Agent tools take a message and, to continue a conversation, the thread_uuid of an earlier answer.'

/** One request's MCP server: the caller's tools, read when asked for. */
function serverFor(ctx: ResourceCtx): Server {
  // The SDK's low-level Server: the tools' JSON Schemas are built at run time, which McpServer's zod
  // registration does not take, and McpServer announces `tools.listChanged: true` whatever it is
  // told, while a server whose sessions last one request can never send that notification.
  const mcp = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS })
  mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await listTools(ctx) }))
  mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
    try {
      return await callTool(ctx, request.params.name, request.params.arguments)
    } catch (error) {
      if (error instanceof UnknownToolError) throw new McpError(ErrorCode.InvalidParams, error.message)
      if (error instanceof AppError) throw new McpError(ErrorCode.InvalidRequest, error.message)
      ctx.log.error({ err: error }, 'MCP tools/call failed')
      // The SDK would send the error's own message; a database error's is no client's business.
      throw new McpError(ErrorCode.InternalError, `Internal error (request ${ctx.requestId})`)
    }
  })
  return mcp
}

/**
 * Errors before the SDK has the request: the API's error bodies, and with a 401 the challenge
 * that names the protected resource metadata (RFC 9728, 5.1), where an OAuth client discovers
 * the authorization server (docs/api/mcp.md, "Authorization").
 */
function mcpErrorHandler(config: Config) {
  const challenge = `Bearer resource_metadata="${oauth.resourceMetadataUrlOf(config)}"`
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError && error.status === 401) void reply.header('www-authenticate', challenge)
    return handleRouteError(error, request, reply)
  }
}

/** Hands one authenticated request to a new stateless server and transport (module comment). */
async function serve(ctx: ResourceCtx, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const mcp = serverFor(ctx)
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
  await mcp.connect(transport)
  reply.hijack()
  const res = reply.raw
  res.setHeader('x-request-id', request.id)
  res.once('close', () => {
    void transport.close()
    void mcp.close()
  })
  try {
    await transport.handleRequest(request.raw, res, request.body)
  } catch (error) {
    request.log.error({ err: error }, 'MCP request failed')
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'Internal server error' }, id: null }))
    } else res.end()
  }
}

/** Registers `POST /mcp`, and `GET`/`DELETE /mcp` answering 405. */
export async function mcpRoutes(scope: FastifyInstance, options: McpRoutesOptions): Promise<void> {
  scope.setErrorHandler(mcpErrorHandler(options.config))
  scope.post('/mcp', async (request, reply) => {
    const ctx = await authorize(contextOf(options.createContext, request, reply), false)
    await serve(ctx, request, reply)
  })
  const notAllowed = async (request: FastifyRequest, reply: FastifyReply) =>
    reply
      .status(405)
      .header('allow', 'POST')
      .send(errorBody(405, 'This MCP server is stateless: send JSON-RPC messages with POST; it opens no stream for notifications', request.id))
  scope.get('/mcp', notAllowed)
  scope.delete('/mcp', notAllowed)
}
