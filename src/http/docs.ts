/**
 * `GET /docs`: the interactive API reference (docs/api/conventions.md, "The OpenAPI document").
 * The page is Scalar's API reference (`@scalar/api-reference`, its standalone browser bundle)
 * reading `/openapi.json`. The service serves the bundle itself from node_modules, and the
 * reference is configured to load nothing from elsewhere (no telemetry, no web fonts, no request
 * proxy, no hosted services), so the page works offline and behind a firewall, and its
 * Content-Security-Policy can allow scripts from this origin only.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'

const gzipAsync = promisify(gzip)

/** One script the page loads from `/docs/assets/<name>`. */
export interface DocsAsset {
  /** The file name; it changes whenever the content does, so the asset may be cached for good. */
  name: string
  body: Buffer
  /** The body gzipped, made on first use by {@link gzippedAsset}. */
  gzipped?: Buffer
}

/** The two scripts of the page, with versioned names. */
export interface DocsAssets {
  reference: DocsAsset
  start: DocsAsset
}

/**
 * The page's settings for Scalar (`@scalar/types`, `ApiReferenceConfiguration`). Every default
 * that reaches another host is turned off: the test in test/docs-browser.test.ts fails when the
 * page makes a request outside this origin.
 */
const SCALAR_SETTINGS = {
  url: '/openapi.json',
  telemetry: false,
  // The default fonts come from fonts.scalar.com; the system's fonts do.
  withDefaultFonts: false,
  // Scalar's hosted services: its AI agent and its MCP integration. No request proxy is set, so
  // try-it requests go straight to this origin.
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  // The button opens Scalar's hosted client app; the try-it client on the page needs no other.
  hideClientButton: true,
  documentDownloadType: 'json',
  // The schemas are listed as what they are in OpenAPI terms.
  modelsSectionLabel: 'Schemas',
  authentication: { preferredSecurityScheme: 'bearerAuth' },
  hiddenClients: { c: true, clojure: true, csharp: true, dart: true, fsharp: true, objc: true, ocaml: true, r: true },
  defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
}

/**
 * The script that starts the reference once the bundle has defined `window.Scalar`. The try-it
 * client sends its requests to the origin the page came from, not to the document's server
 * (`APP_URL`): the service sends no CORS headers, so this origin is the one a browser may call,
 * and the one the reader is looking at.
 */
const START_SCRIPT = `// Starts Scalar's API reference on #app (see src/http/docs.ts).
'use strict'
window.Scalar.createApiReference('#app', Object.assign(${JSON.stringify(SCALAR_SETTINGS)}, {
  servers: [{ url: window.location.origin, description: 'This service' }],
}))
`

/** The directory of `@scalar/api-reference`'s built files, found the way Node resolves the package. */
function scalarDist(): string {
  return path.dirname(createRequire(import.meta.url).resolve('@scalar/api-reference'))
}

/** Reads the bundle and names both scripts after their content (the package version, a hash). */
export async function loadDocsAssets(): Promise<DocsAssets> {
  const dist = scalarDist()
  const [bundle, packageJson] = await Promise.all([
    readFile(path.join(dist, 'browser', 'standalone.js')),
    readFile(path.join(dist, '..', 'package.json'), 'utf8'),
  ])
  const { version }: { version: string } = JSON.parse(packageJson)
  const start = Buffer.from(START_SCRIPT)
  const hash = createHash('sha256').update(start).digest('hex').slice(0, 12)
  return {
    reference: { name: `scalar-api-reference-${version}.js`, body: bundle },
    start: { name: `start-${hash}.js`, body: start },
  }
}

/** The asset's body gzipped, compressed once: the bundle is about 4 MB, about 1 MB gzipped. */
export async function gzippedAsset(asset: DocsAsset): Promise<Buffer> {
  asset.gzipped ??= await gzipAsync(asset.body)
  return asset.gzipped
}

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c)

/**
 * The page's policy: scripts from this origin only, requests (the document, try-it calls) to it
 * only. Styles allow inline: Scalar injects its stylesheet and sets style attributes from script.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** The reference page: an empty mount point and the two scripts (and no icon, so no /favicon.ico 404). */
export function renderDocsPage(title: string, assets: DocsAssets): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>This reference needs JavaScript. The OpenAPI document it shows is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<div id="app"></div>
<script src="/docs/assets/${assets.reference.name}"></script>
<script src="/docs/assets/${assets.start.name}"></script>
</body>
</html>
`
}
