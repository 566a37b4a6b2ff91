/**
 * `GET /console/...`: the web console (docs/console.md), the files ./console-build.ts built into
 * dist/console. Its scripts and styles (`/console/assets/<name>-<hash>.<ext>`) are kept by
 * browsers for a year; every other path under /console answers the app's page, whose router
 * draws the screen the path names. `GET /` leads to the console.
 */
import fastifyStatic from '@fastify/static'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errorBody } from './errors.ts'
import { CONSOLE_BUILD_DIR } from './console-build.ts'

/**
 * Same-origin everything: the console's own scripts, its calls to /trpc (HTTP and SSE), images it
 * was given as data or blob URLs. Mantine sets CSS variables through a style element, hence the
 * inline styles.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** Registers the console's routes and the redirect from `/`. */
export async function consolePlugin(scope: FastifyInstance): Promise<void> {
  const assets = path.join(CONSOLE_BUILD_DIR, 'assets')
  await scope.register(fastifyStatic, {
    root: assets,
    prefix: '/console/assets/',
    // A missing build must not stop the service from starting: the page answers 503 instead.
    allowedPath: () => existsSync(assets),
    wildcard: true,
    // ./console-build.ts wrote a .br and a .gz beside each script and style sheet.
    preCompressed: true,
    immutable: true,
    maxAge: '365d',
    index: false,
  })
  scope.get('/', (_request, reply) => reply.redirect('/console/', 302))
  scope.get('/console', sendPage)
  scope.get('/console/*', sendPage)
}

/** The app's page, checked on every visit (it names the current assets). */
async function sendPage(request: FastifyRequest, reply: FastifyReply) {
  let html: string
  try {
    html = await readFile(path.join(CONSOLE_BUILD_DIR, 'index.html'), 'utf8')
  } catch {
    return reply.status(503).send(errorBody(503, 'The console is not built: run `npm run console:build` (it needs the dev dependencies)', request.id))
  }
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', CONSOLE_CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .send(html)
}
