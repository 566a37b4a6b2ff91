/**
 * `GET /docs`: a readable API reference rendered on the server from the generated OpenAPI
 * document, with no script and nothing fetched from elsewhere (works offline).
 */
import type { OpenAPIObject } from 'trpc-to-openapi'

type Media = { content?: Record<string, { schema?: unknown }>; description?: string }

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

const escape = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c)

const json = (value: unknown) => `<pre>${escape(JSON.stringify(value, null, 2))}</pre>`

/** Renders the reference page. */
export function renderDocs(doc: OpenAPIObject): string {
  const byTag = new Map<string, string[]>()
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      const tag = op.tags?.[0] ?? 'Other'
      const params = (op.parameters ?? [])
        .flatMap((p) => ('name' in p ? [p] : []))
        .map((p) => `<li><code>${escape(p.name)}</code> (${escape(p.in)}${p.required ? ', required' : ''})</li>`)
        .join('')
      const requestBody: Media | undefined = op.requestBody && 'content' in op.requestBody ? op.requestBody : undefined
      const body = requestBody?.content?.['application/json']?.schema
      const success = Object.entries<Media>(op.responses ?? {}).find(([status]) => status.startsWith('2'))
      const html = `<section class="op"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code>${op.security?.length ? ' 🔒' : ''}</h3>
<p>${escape(op.summary ?? '')}</p>${params ? `<h4>Parameters</h4><ul>${params}</ul>` : ''}
${body ? `<details><summary>Request body</summary>${json(body)}</details>` : ''}
${success ? `<details><summary>Response ${escape(success[0])}</summary>${json(success[1].content?.['application/json']?.schema ?? success[1].description)}</details>` : ''}</section>`
      byTag.set(tag, [...(byTag.get(tag) ?? []), html])
    }
  }
  const toc = [...byTag.keys()].map((tag) => `<a href="#${escape(tag)}">${escape(tag)}</a>`).join(' · ')
  const sections = [...byTag].map(([tag, ops]) => `<h2 id="${escape(tag)}">${escape(tag)}</h2>${ops.join('')}`).join('')
  const schemas = Object.entries(doc.components?.schemas ?? {})
    .map(([name, schema]) => `<details><summary><code>${escape(name)}</code></summary>${json(schema)}</details>`)
    .join('')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info.title)} API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1d232a}
code,pre{font-family:ui-monospace,monospace}pre{background:#f4f5f7;padding:.75rem;overflow:auto;border-radius:6px}
.op{border-top:1px solid #e3e6ea;padding:.5rem 0}.m{display:inline-block;min-width:4.5em;font-size:.8em;padding:.1em .4em;border-radius:4px;color:#fff;background:#555}
.get{background:#2f7d32}.post{background:#1565c0}.put{background:#ef6c00}.delete{background:#c62828}.patch{background:#6a1b9a}</style></head>
<body><h1>${escape(doc.info.title)} <small>${escape(doc.info.version)}</small></h1>
<p>${escape(doc.info.description ?? '')}</p><p>Machine-readable: <a href="/openapi.json">/openapi.json</a>. Errors answer <code>{message, code, issues, request_id}</code>.</p>
<nav>${toc}</nav>${sections}<h2>Schemas</h2>${schemas}</body></html>`
}
