/**
 * Uploads over real HTTP (`POST /api/v1/media`, multipart built by fetch's FormData) and sample
 * files whose bytes file-type recognises. Answers are checked against the OpenAPI document (./contract.ts).
 */
import type { HttpResult, TestApp } from './app.ts'
import { checkAnswer } from './contract.ts'

/** A 1x1 PNG. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
)
/** The start of a JPEG (JFIF). */
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(64, 1)])
/** A GIF header. */
export const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(32, 0)])
/** A WebP header. */
export const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(32, 0)])
/** A tiny PDF. */
export const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n')
/** A ZIP archive header (not on the allow-list). */
export const ZIP = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0, 0, 0]), Buffer.alloc(40, 0)])

/** One file part: bytes, file name and the Content-Type the client claims. */
export interface FilePart {
  bytes: Buffer | string
  filename: string
  type?: string
  field?: string
}

/** Sends a multipart body with the given files and text fields. */
export async function upload(
  t: TestApp,
  options: { token?: string; files?: FilePart[]; fields?: Record<string, string>; headers?: Record<string, string> },
): Promise<HttpResult> {
  const form = new FormData()
  for (const [name, value] of Object.entries(options.fields ?? {})) form.append(name, value)
  for (const file of options.files ?? []) {
    const bytes = typeof file.bytes === 'string' ? Buffer.from(file.bytes) : file.bytes
    form.append(file.field ?? 'file', new Blob([new Uint8Array(bytes)], { type: file.type ?? 'application/octet-stream' }), file.filename)
  }
  const headers: Record<string, string> = { ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  const response = await fetch(`${t.url}/api/v1/media`, { method: 'POST', headers, body: form })
  const text = await response.text()
  let body: unknown
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    body = text
  }
  checkAnswer('POST', '/api/v1/media', response.status, response.headers.get('content-type'), body)
  return { status: response.status, headers: response.headers, body }
}

/** Uploads a file and answers its key (fails the test unless 201). */
export async function uploadKey(t: TestApp, token: string, file: FilePart = { bytes: PNG, filename: 'photo.png' }): Promise<string> {
  const res = await upload(t, { token, files: [file] })
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data.key
}
