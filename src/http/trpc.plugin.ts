/**
 * `/trpc`: the tRPC surface (docs/architecture.md). Queries, mutations and batches over HTTP;
 * subscriptions over WebSocket (`ws`, upgraded on the host's own server) or SSE.
 */
import { fastifyTRPCPlugin } from '@trpc/server/adapters/fastify'
import { applyWSSHandler } from '@trpc/server/adapters/ws'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { WebSocketServer } from 'ws'
import { appRouter } from '../../routers/index.ts'
import type { AppDeps } from '../trpc/context.ts'
import { contextOfRequest, requestIdOf, wsHeaders, type ConnectionParams, type CreateContext } from './request-context.ts'

/** What the tRPC surface needs from the host. */
export interface TrpcOptions {
  /** `log` for procedure faults, `config.bodyLimitBytes` for WebSocket messages. */
  deps: Pick<AppDeps, 'log' | 'config'>
  createContext: CreateContext
}

/** Registers `/trpc` over HTTP and the WebSocket server behind it. */
export async function trpcPlugin(scope: FastifyInstance, options: TrpcOptions): Promise<void> {
  const { deps, createContext } = options
  await scope.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: {
      router: appRouter,
      createContext: ({ req, res, info }: { req: FastifyRequest; res: FastifyReply; info: { connectionParams: ConnectionParams } }) =>
        contextOfRequest(createContext, req, res, false, info.connectionParams),
      onError: ({ error }: { error: { code: string } & Error }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error }, 'procedure failed')
      },
    },
  })
  serveWebSockets(scope, options)
}

/**
 * Answers WebSocket upgrades of `/trpc` (any other path is refused by closing the socket). On
 * close, clients are told to reconnect and closed with 1001, so they find another process.
 */
function serveWebSockets(scope: FastifyInstance, { deps, createContext }: TrpcOptions): void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.config.bodyLimitBytes })
  const wssHandler = applyWSSHandler({
    wss,
    router: appRouter,
    // Browsers cannot set headers on a WebSocket: tRPC's connectionParams carry them instead.
    createContext: ({ req, info }) =>
      createContext({
        requestId: requestIdOf(req),
        ip: req.socket.remoteAddress ?? '',
        headers: { ...req.headers, ...wsHeaders(info.connectionParams) },
        setHeader: () => {},
      }),
    keepAlive: { enabled: true, pingMs: 30_000, pongWaitMs: 5_000 },
  })
  scope.server.on('upgrade', (req, socket, head) => {
    if (!req.url?.startsWith('/trpc')) return void socket.destroy()
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req))
  })
  scope.addHook('preClose', (done) => {
    wssHandler.broadcastReconnectNotification()
    for (const client of wss.clients) client.close(1001, 'server shutting down')
    wss.close(() => done())
  })
}
