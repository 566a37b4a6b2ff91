/**
 * Uploads a file (`POST /api/v1/media`, docs/api/resources.md, "Media"): the console's one call
 * that is not tRPC. Uploads are multipart, which no procedure takes (a procedure's input is JSON),
 * so this posts the file with `fetch` and the same bearer token and workspace header as every tRPC
 * call (./api.ts `credentials`). The answer's `key` is what `profile_photo_key` and knowledge's
 * `{type: 'file', key}` sources refer to; its `url` is public (keys are random), so an `<img>` can
 * show an uploaded photo without a token.
 *
 * A refusal is thrown as an {@link UploadError} carrying a {@link Problem} worded for a person:
 * 413 (over the service's `UPLOAD_MAX_BYTES`), 415 (a type off the allow-list, or an empty file)
 * and 400 (its issues by field), each with the service's own message.
 */
import { useMutation } from '@tanstack/react-query'
import { credentials, problemOf, type Problem } from './api.ts'

/** A stored upload as the service answers it (`{data: MediaUpload}`). */
export interface Upload {
  uuid: string
  /** What other resources refer to. */
  key: string
  /** Where the file is read, without a token. */
  url: string
  /** Detected by the service from the bytes, never taken from the browser. */
  mime_type: string
  /** Bytes. */
  size: number
}

/** A refused or failed upload, with its {@link Problem}. */
export class UploadError extends Error {
  override name = 'UploadError'
  constructor(readonly problem: Problem) {
    super(problem.message)
  }
}

/** The Problem of a failed upload (an {@link UploadError}, or anything else thrown on the way). */
export function uploadProblemOf(error: unknown): Problem {
  return error instanceof UploadError ? error.problem : problemOf(error)
}

interface ErrorBody {
  message?: unknown
  issues?: { path?: unknown[]; message?: unknown }[]
}

/** Seconds of a Retry-After header (a number, or a date), or null. */
function retryAfter(value: string | null): number | null {
  if (!value) return null
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds)
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, Math.round((at - Date.now()) / 1000))
}

/** The service's error body read as a Problem, its message prefixed by what the status means. */
function problemFrom(response: Response, body: ErrorBody | null, fileName: string): Problem {
  const status = response.status
  const said = typeof body?.message === 'string' ? body.message : `The service answered ${status}`
  const issues = Array.isArray(body?.issues) ? body.issues : []
  const fields: Record<string, string> = {}
  for (const issue of issues) {
    const path = Array.isArray(issue.path) ? issue.path.map(String).join('.') : ''
    if (typeof issue.message === 'string') fields[path] ??= issue.message
  }
  const detail = Object.values(fields).join('; ')
  const message =
    status === 413
      ? `“${fileName}” is too large for the service: ${said}`
      : status === 415
        ? `“${fileName}” is not a type the service accepts: ${said}`
        : status === 400
          ? `“${fileName}” was refused: ${detail || said}`
          : said
  return {
    status,
    message,
    fields,
    retryAfter: retryAfter(response.headers.get('retry-after')),
    issues: issues.map((issue) => ({
      code: 'custom',
      path: Array.isArray(issue.path) ? (issue.path as (string | number)[]) : [],
      message: String(issue.message ?? ''),
    })),
  }
}

/**
 * Uploads `file` in the field `file` and answers the stored upload.
 * @throws UploadError with the service's refusal, or status 0 when it could not be reached.
 */
export async function uploadFile(file: File, signal?: AbortSignal): Promise<Upload> {
  const body = new FormData()
  body.append('file', file, file.name)
  const headers: Record<string, string> = {}
  if (credentials.token) headers.authorization = `Bearer ${credentials.token}`
  if (credentials.workspace) headers['x-workspace-uuid'] = credentials.workspace
  let response: Response
  try {
    // No content-type of our own: the browser writes multipart's boundary into it.
    response = await fetch(`${location.origin}/api/v1/media`, { method: 'POST', body, headers, signal })
  } catch (error) {
    throw new UploadError({ ...problemOf(error), message: `“${file.name}” could not be sent: the service could not be reached` })
  }
  const answer = (await response.json().catch(() => null)) as ({ data?: Upload } & ErrorBody) | null
  if (!response.ok || !answer?.data) throw new UploadError(problemFrom(response, answer, file.name))
  return answer.data
}

/** The upload as a mutation, so a screen has its pending state and its error like any other change. */
export function useUpload(config?: { onSuccess?: (upload: Upload, file: File) => unknown }) {
  return useMutation({ mutationFn: (file: File) => uploadFile(file), onSuccess: config?.onSuccess })
}
