/**
 * The messages of validation issues that zod's own would make unreadable (docs/api/conventions.md,
 * "Errors"): a malformed uuid is "agent_uuid must be a UUID" on both surfaces, wherever the field
 * is (path, query, body, nested), and no issue carries the regular expression behind a format.
 */
import { z } from 'zod'

/** A field as a client writes it: `agent_uuid`, `tools[0].tool_uuid`; empty for the input itself. */
export function fieldName(path: readonly PropertyKey[]): string {
  return path.reduce<string>((name, key) => (typeof key === 'number' ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key)), '')
}

/** The message of a malformed uuid at `path`. */
export const notUuidMessage = (path: readonly PropertyKey[]): string => {
  const name = fieldName(path)
  return name ? `${name} must be a UUID` : 'Must be a UUID'
}

/**
 * The process-wide zod error map (`z.config({ customError })`, installed by src/trpc/init.ts):
 * sentences for the issues it knows, zod's English messages for the rest. It sees an issue once
 * parsing ended, with its whole path.
 */
export const issueMessage: z.core.$ZodErrorMap = (issue) =>
  issue.code === 'invalid_format' && issue.format === 'uuid' ? notUuidMessage(issue.path ?? []) : undefined

/**
 * An issue as clients get it: without `pattern`, the regular expression of a string format, which is
 * the validator's business (a uuid's is 150 characters) and says nothing the message does not.
 */
export function publicIssue<T extends object>(issue: T): Omit<T, 'pattern'> {
  if (!('pattern' in issue)) return issue
  const { pattern: _pattern, ...rest } = issue
  return rest
}
