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
import { DRAIN_RETRY_AFTER_SECONDS } from './errors.ts'
import { contextOfRequest, requestIdOf, wsHeaders, type ConnectionParams, type CreateContext } from './request-context.ts'

/** What the tRPC surface needs from the host. */
export interface TrpcOptions {
  /** `log` for procedure faults, `config.bodyLimitBytes` for WebSocket messages. */
  deps: Pick<AppDeps, 'log' | 'config'>
  createContext: CreateContext
  /** Aborted when the host starts draining (shutdown): WebSocket clients are told to reconnect. */
  draining?: AbortSignal
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
        // A lost database connection (a 503): worth a line, not a fault of the code.
        else if (error.code === 'SERVICE_UNAVAILABLE') deps.log.warn({ err: error.cause ?? error }, 'procedure unavailable')
      },
    },
  })
  serveWebSockets(scope, options)
}

/**
 * Answers WebSocket upgrades of `/trpc` (any other path is refused by closing the socket). When
 * the host drains (or closes), clients are told to reconnect (tRPC's reconnect notification) and
 * closed with 1001, so they find another process; upgrades that arrive while draining are answered
 * 503 with `Retry-After`.
 */
function serveWebSockets(scope: FastifyInstance, { deps, createContext, draining }: TrpcOptions): void {
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
    if (draining?.aborted) {
      socket.end(`HTTP/1.1 503 Service Unavailable\r\nRetry-After: ${DRAIN_RETRY_AFTER_SECONDS}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req))
  })
  let told = false
  const reconnect = () => {
    if (told) return
    told = true
    wssHandler.broadcastReconnectNotification()
    for (const client of wss.clients) client.close(1001, 'server shutting down')
  }
  draining?.addEventListener('abort', reconnect, { once: true })
  scope.addHook('preClose', (done) => {
    reconnect()
    wss.close(() => done())
  })
}
