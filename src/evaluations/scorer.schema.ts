/**
 * The scorers of an evaluation (docs/api/evaluations.md, "Scorers"): how each item's run
 * output is graded. Seven kinds, told apart by `type`; unknown fields are refused. A scorer that
 * could never work is refused here, so creation answers 400 naming the field: a pattern that does
 * not compile (`scorers.<i>.pattern`), a JSON Schema Ajv cannot compile (`scorers.<i>.schema`).
 * What each one checks is ./scorers.ts.
 */
import { z } from 'zod'
import { refineStorableJson } from '../access/resource.schema.ts'
import { jsonBytes, jsonInt, name, text } from '../access/wire.ts'
import { jsonSchemaProblem } from '../platform/json-schema.ts'
import { regexProblem } from '../platform/regex.ts'
import { ModelRef } from '../models/index.ts'

/** Most scorers of one evaluation. */
export const SCORERS_MAX = 10
/** Longest `regex` pattern, in characters (matching is also time-limited: ./scorers.ts). */
export const PATTERN_MAX = 500
/** Longest `contains` value, in characters. */
export const CONTAINS_VALUE_MAX = 2_000
/** Largest `json_schema` schema, in bytes of JSON. */
export const JSON_SCHEMA_MAX_BYTES = 64 * 1024
/** Longest `llm_judge` rubric, in characters. */
export const RUBRIC_MAX = 4_000
/** Largest `max_latency_ms` value: one day, in milliseconds. */
export const LATENCY_MAX_MS = 86_400_000
/** Largest `max_cost` value, in US dollars. */
export const COST_MAX = 10_000

/** A regular expression (JavaScript syntax, `u` flag) that compiles; not empty (it would match every output). */
const Pattern = text(PATTERN_MAX, 1)
  .superRefine((value, ctx) => {
    const problem = regexProblem(value)
    if (problem) ctx.addIssue({ code: 'custom', message: `is not a valid regular expression: ${problem}` })
  })
  .meta({
    description: `A regular expression, JavaScript syntax with the \`u\` flag, at most ${PATTERN_MAX} characters; searched anywhere in the output.`,
  })

/** A JSON Schema object that jsonb can store and Ajv compiles (draft-07 unless `$schema` names 2019-09 or 2020-12). */
const OutputSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    refineStorableJson(value, ctx)
    if (jsonBytes(value) > JSON_SCHEMA_MAX_BYTES) {
      ctx.addIssue({ code: 'custom', message: `must not exceed ${JSON_SCHEMA_MAX_BYTES} bytes as JSON` })
      return
    }
    const problem = jsonSchemaProblem(value)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })
  .meta({
    description: 'A JSON Schema (draft-07 unless `$schema` names 2019-09 or 2020-12) the whole output, parsed as JSON, must satisfy.',
  })

/** Dollars within [0, COST_MAX] with at most 6 decimal places (the precision of a run's cost); a pipe, so strings are refused. */
const Dollars = z.number().pipe(
  z
    .number()
    .min(0)
    .max(COST_MAX)
    .refine((value) => Number(value.toFixed(6)) === value, 'at most 6 decimal places'),
)

/**
 * One scorer, as written by the caller. `contains` without `value` looks for the item's expected
 * output; `llm_judge` without `large_language_model` uses the workspace's default model.
 */
export const Scorer = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('exact_match') }),
    z.strictObject({
      type: z.literal('contains'),
      value: name(CONTAINS_VALUE_MAX).optional().meta({ description: "The text to look for; the item's expected output when omitted." }),
    }),
    z.strictObject({ type: z.literal('regex'), pattern: Pattern }),
    z.strictObject({ type: z.literal('json_schema'), schema: OutputSchema }),
    z.strictObject({
      type: z.literal('max_latency_ms'),
      value: jsonInt(0, LATENCY_MAX_MS).meta({
        description: `Passes when the run took at most this many milliseconds: 0..${LATENCY_MAX_MS}.`,
      }),
    }),
    z.strictObject({
      type: z.literal('max_cost'),
      value: Dollars.meta({ description: `Passes when the run cost at most this many US dollars: 0..${COST_MAX}, 6 decimals.` }),
    }),
    z.strictObject({
      type: z.literal('llm_judge'),
      rubric: name(RUBRIC_MAX).meta({ description: `What a good output is, for the judge model: 1..${RUBRIC_MAX} characters.` }),
      large_language_model: ModelRef.optional(),
    }),
  ])
  .meta({ id: 'Scorer', description: 'How an item is graded (docs/api/evaluations.md).' })
export type TScorer = z.infer<typeof Scorer>
/** A scorer's `type`. */
export type ScorerType = TScorer['type']

/** An evaluation's scorers: 1..{@link SCORERS_MAX}, applied in this order. */
export const Scorers = z.array(Scorer).min(1).max(SCORERS_MAX)

/**
 * A scorer as answered (inside an evaluation or a score): the fields as stored, without the input's
 * checks, so reading thousands of scores compiles no pattern and no schema.
 */
export const ScorerSettings = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('exact_match') }),
    z.object({ type: z.literal('contains'), value: z.string().optional() }),
    z.object({ type: z.literal('regex'), pattern: z.string() }),
    z.object({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) }),
    z.object({ type: z.literal('max_latency_ms'), value: z.number().int() }),
    z.object({ type: z.literal('max_cost'), value: z.number() }),
    z.object({ type: z.literal('llm_judge'), rubric: z.string(), large_language_model: z.string().optional() }),
  ])
  .meta({ id: 'ScorerSettings' })

/**
 * One scorer's grade of one item: `score` 0..1 (exactly 0 or 1 except for `llm_judge`), `passed`,
 * and `reason` in plain words.
 */
export const ScoreResult = z
  .object({
    scorer: ScorerSettings,
    score: z.number().min(0).max(1),
    passed: z.boolean(),
    reason: z.string(),
  })
  .meta({ id: 'ScoreResult' })
export type TScoreResult = z.infer<typeof ScoreResult>
