/**
 * Uploads as plain Fastify routes beside the procedures (docs/api/resources.md: multipart is not a
 * JSON procedure). `POST /api/v1/media` authenticates like `workspaceProcedure` (same service
 * functions: bearer token, service scope, workspace context; a read-only token is 403), parses
 * the body with @fastify/multipart and answers the error bodies of docs/api/conventions.md
 * ("Errors").
 * `GET /api/v1/media/{key}` serves an upload publicly: keys are random and unguessable.
 */
import fastifyMultipart from '@fastify/multipart'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { AppError, UnsupportedMediaTypeError, ValidationError } from '../platform/errors.ts'
import { MediaUploadForm, MediaUploadResponse } from '../catalog/index.ts'
import { media } from '../catalog/index.ts'
import { createStorage, type MediaStorage } from '../platform/storage.ts'
import type { Config } from '../platform/config.ts'
import { VALIDATION_MESSAGE } from '../trpc/errors.ts'
import { errorBody, handleHostError, sendAppError } from './errors.ts'
import type { CreateContext } from './request-context.ts'
import { authorize, contextOf } from './route-auth.ts'

/** What the routes need from the host. */
export interface MediaRoutesOptions {
  createContext: CreateContext
  config: Config
  /** The store; defaults to the local folder `DATA_DIR/media`. */
  storage?: MediaStorage
}

/** A body the multipart parser could not read (cut short, no boundary, broken part headers). */
class MalformedBodyError extends AppError {
  override name = 'MalformedBodyError'
  readonly status = 400
}

/**
 * `Content-Disposition` with the client's file name as RFC 5987 data (never raw in the header):
 * percent-encoded UTF-8, where `encodeURIComponent` leaves `'()*` that RFC 5987 does not allow.
 */
function disposition(mimeType: string, key: string, originalName: string): string {
  const kind = mimeType.startsWith('image/') ? 'inline' : 'attachment'
  const encoded = encodeURIComponent(originalName.toWellFormed()).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${kind}; filename="${key}"; filename*=UTF-8''${encoded}`
}

/** Maps what a route throws to the documented error body. */
function handleMediaError(this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const send = (status: number, message: string, issues?: unknown[]) =>
    reply.status(status).header('x-request-id', request.id).send(errorBody(status, message, request.id, issues))
  if (sendAppError(error, request, reply)) return reply
  const { FilesLimitError, PartsLimitError, FieldsLimitError, RequestFileTooLargeError, InvalidMultipartContentTypeError } =
    this.multipartErrors
  if (error instanceof FilesLimitError) {
    return send(400, VALIDATION_MESSAGE, [{ code: 'custom', path: ['file'], message: 'Send one file' }])
  }
  if (error instanceof PartsLimitError || error instanceof FieldsLimitError) return send(400, 'Too many form fields; send one file as "file"')
  if (error instanceof RequestFileTooLargeError) return send(413, 'The file is too large')
  if (error instanceof InvalidMultipartContentTypeError) return send(415, 'Send multipart/form-data')
  return handleHostError(error, request, reply)
}

/** Registers `POST /api/v1/media` and `GET /api/v1/media/{key}` in their own scope. */
export async function mediaRoutes(scope: FastifyInstance, options: MediaRoutesOptions): Promise<void> {
  const storage = options.storage ?? createStorage(options.config)

  // Only multipart is parsed here; any other body is left unread and answered 415 by the handler.
  scope.removeAllContentTypeParsers()
  await scope.register(fastifyMultipart)
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null))
  scope.setErrorHandler(handleMediaError)

  scope.post('/api/v1/media', async (request, reply) => {
    const ctx = await authorize(contextOf(options.createContext, request, reply), true)
    if (!request.isMultipart()) throw new UnsupportedMediaTypeError('Send multipart/form-data with the file in the field "file"')
    const maxBytes = ctx.config.uploadMaxBytes
    // One byte over the limit tells "too large" from "exactly the limit".
    const parts = request.parts({ limits: { fileSize: maxBytes + 1, files: 1, fields: 10, fieldSize: 1024, parts: 11 } })
    let stored: media.StoredFile | null = null
    try {
      for (;;) {
        const next = await parts.next().catch((error: unknown) => {
          if (error instanceof Error && 'statusCode' in error) throw error
          throw new MalformedBodyError('Malformed multipart body')
        })
        if (next.done) break
        const part = next.value
        if (part.type === 'field') {
          throw new ValidationError([part.fieldname], part.fieldname === 'file' ? 'Must be a file, not a text field' : 'Unknown field; send only the file, as "file"')
        }
        if (part.fieldname !== 'file') {
          part.file.resume()
          throw new ValidationError([part.fieldname], 'Unknown field; send the file as "file"')
        }
        stored = await media.storeFile(storage, { filename: part.filename, stream: part.file }, maxBytes)
      }
      if (!stored) throw new ValidationError(['file'], 'Required: one file in the field "file"')
      const created = await media.recordUpload(ctx, storage, stored)
      return reply.status(201).send(created)
    } catch (error) {
      if (stored) await media.discardFile(storage, stored)
      throw error
    }
  })

  scope.get<{ Params: { key: string } }>('/api/v1/media/:key', async (request, reply) => {
    const ctx = contextOf(options.createContext, request, reply)
    const found = await media.openMedia(ctx.em, storage, request.params.key)
    if (!found) return reply.status(404).send(errorBody(404, 'Media not found', request.id))
    const text = found.mimeType.startsWith('text/') || found.mimeType === 'application/json' || found.mimeType === 'application/jsonl'
    return reply
      .header('content-type', text ? `${found.mimeType}; charset=utf-8` : found.mimeType)
      .header('content-length', String(found.size))
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', disposition(found.mimeType, request.params.key, found.originalName))
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cache-control', 'public, max-age=31536000, immutable')
      .send(found.body)
  })
}

/** The two routes in the OpenAPI document (trpc-to-openapi's `paths` option). */
export const MEDIA_OPENAPI_PATHS = {
  '/api/v1/media': {
    post: {
      operationId: 'media-upload',
      summary: 'Upload a file (multipart/form-data, one field "file")',
      description:
        'Upload a file (multipart/form-data, one field "file"); its type is detected from its bytes and must be on the ' +
        'allow-list. Answers 201 with the key other resources refer to (`profile_photo_key`, `file.keys`). Needs a ' +
        'bearer token that may write; a read-only token is refused (403).',
      tags: ['Media'],
      security: [{ bearerAuth: [] }],
      parameters: [{ $ref: '#/components/parameters/ServiceAuthorization' }, { $ref: '#/components/parameters/WorkspaceUuid' }],
      requestBody: { required: true, content: { 'multipart/form-data': { schema: MediaUploadForm } } },
      responses: {
        '201': { description: 'Stored', content: { 'application/json': { schema: MediaUploadResponse } } },
        '400': { description: 'No file in the field "file", a malformed body, or a malformed X-Workspace-UUID' },
        '401': { description: 'No valid token, or an unknown service key' },
        '403': { description: 'A read-only token' },
        '404': { description: 'No such workspace, or one the caller is no member of (X-Workspace-UUID)' },
        '413': { description: 'Over UPLOAD_MAX_BYTES' },
        '415': { description: 'Not multipart, or a file type off the allow-list' },
      },
    },
  },
  '/api/v1/media/{key}': {
    get: {
      operationId: 'media-read',
      summary: 'Read an upload (public: keys are random)',
      description: 'Read an upload by its key, with the Content-Type detected at upload. Public: no token needed (keys are random).',
      tags: ['Media'],
      requestParams: { path: z.object({ key: z.string() }) },
      responses: {
        '200': { description: 'The file, with its detected Content-Type' },
        '404': { description: 'No upload has this key' },
      },
    },
  },
}
