/**
 * The input names a prompt's template uses, read with the parser the service renders it with (the
 * `mustache` package, src/prompts' renderer), so the console proposes exactly the names a run
 * would look up: `{{key}}`, `{{{key}}}`, `{{&key}}`, and the sections `{{#key}}`/`{{^key}}`, at
 * any depth, after any `{{=<% %>=}}` change of delimiters. A dotted name (`{{city.name}}`) looks
 * its first part up among the inputs; `{{.}}`, comments and partials name none.
 */
import Mustache from 'mustache'

/** What the service takes as an input key (docs/api/resources.md, "Prompts"). */
export const INPUT_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

/** The parse of the template: its input names in order of first use, or why it is not a template. */
export type TemplateNames = { names: string[]; error: null } | { names: []; error: string }

/** A writer of our own, emptied before each parse: the page parses a new template at every keystroke. */
const writer = new Mustache.Writer()

/** Token kinds that look a name up in the view. */
const LOOKUPS = new Set(['name', '&', '#', '^'])

type Token = [string, string, number, number, Token[]?]

function collect(tokens: Token[], into: Set<string>): void {
  for (const [kind, value, , , children] of tokens) {
    if (LOOKUPS.has(kind)) {
      const first = value.split('.')[0]!
      if (INPUT_KEY.test(first)) into.add(first)
    }
    if (children) collect(children, into)
  }
}

/** The input names `template` uses, in order of first use. */
export function templateNames(template: string): TemplateNames {
  writer.clearCache()
  try {
    const names = new Set<string>()
    collect(writer.parse(template) as Token[], names)
    return { names: [...names], error: null }
  } catch (error) {
    return { names: [], error: error instanceof Error ? error.message : String(error) }
  }
}

/** A label to start from for an input proposed by name: `start_date` becomes "Start date". */
export function labelOf(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_+/g, ' ')
    .trim()
    .toLowerCase()
  return words ? words[0]!.toUpperCase() + words.slice(1) : key
}
