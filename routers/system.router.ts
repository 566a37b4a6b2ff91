/** Service-level procedures that touch no database. */
import { z } from 'zod'
import { envelope } from '../src/access/wire.ts'
import { publicProcedure, router } from '../src/trpc/init.ts'

export const systemRouter = router({
  /** Liveness through the full REST layer; the benchmark's procedure baseline (c). */
  ping: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/ping', tags: ['System'], summary: 'Answer without touching the database', protect: false },
    })
    .input(z.void())
    .output(envelope(z.object({ status: z.literal('ok') })))
    .query(() => ({ data: { status: 'ok' as const } })),
})
