/**
 * A 400's issues shown at the fields they name (docs/console.md, "Errors"): Mantine inputs take
 * `error`, so a form passes `fieldError(problem, 'name')` to each of its inputs and shows the
 * issues no field claims in one alert.
 */
import type { Problem } from '../lib/api.ts'

/** The message of the first issue at `path` (dotted: `inputs.0.name`) or below it. */
export function fieldError(problem: Problem | null | undefined, path: string): string | undefined {
  if (!problem) return undefined
  if (problem.fields[path]) return problem.fields[path]
  const below = Object.keys(problem.fields).find((key) => key.startsWith(`${path}.`))
  return below ? problem.fields[below] : undefined
}

/** The issues of `problem` at none of `shown`'s fields, as lines for an alert. */
export function otherIssues(problem: Problem | null | undefined, shown: string[]): string[] {
  if (!problem) return []
  return Object.entries(problem.fields)
    .filter(([key]) => !shown.some((field) => key === field || key.startsWith(`${field}.`)))
    .map(([key, message]) => (key ? `${key}: ${message}` : message))
}
