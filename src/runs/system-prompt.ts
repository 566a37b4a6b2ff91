/**
 * The system prompt of an agent (docs/api/resources.md, "Agents": composed from
 * `instruction` and the metadata fields in a documented template).
 *
 * The template, section by section, in this order. A section appears only when its field is
 * present and non-empty (a string that is not blank, a list with a non-blank item); sections are
 * separated by one blank line. Field text is kept as written, except that line endings become
 * `\n`, trailing whitespace is removed from every line and leading/trailing blank lines are
 * dropped; list items (starters, memories) are folded onto one line each.
 *
 * ```text
 * You are {name}.                                   always
 * Your role: {role}                                 metadata.role
 *
 * Your goal:                                        metadata.goal_statement
 * {goal_statement}
 *
 * Your backstory:                                   metadata.backstory
 * {backstory}
 *
 * Instructions:                                     instruction
 * {instruction}
 *
 * Base instructions:                                metadata.base_instructions
 * {base_instructions}
 *
 * Rules you must always follow:                     metadata.guardrails
 * {guardrails}
 *
 * Tone of voice:                                    metadata.tone_of_voice
 * {tone_of_voice}
 *
 * Personality:                                      metadata.disc_personality (one of four)
 * {one line for dominant|influential|steady|conscientious, see DISC_DESCRIPTIONS}
 *
 * Greeting:                                         metadata.greetings
 * At the start of a conversation, greet the user like this:
 * {greetings}
 *
 * Examples of what users may ask you:               metadata.conversation_starters
 * - {starter}
 *
 * What you know about the user:                     extras.memories
 * - {memory}
 *
 * Current date and time: {YYYY-MM-DD HH:MM} UTC ({weekday})   extras.now
 * ```
 *
 * Other metadata keys (`openai_voice`, `large_language_model`, `memory`, `knowledge`,
 * `web_search`, and any extra key) are settings or free data, never part of the prompt. A
 * `disc_personality` outside the four values, or a field of the wrong type, is left out. The
 * result depends only on the arguments (no clock is read: pass `now` to state the date).
 */

/** The agent fields the prompt reads. */
export interface SystemPromptAgent {
  name: string
  instruction: string
  metadata: Record<string, unknown>
}

/** What a run adds: the user's remembered facts, the agent's retrieved knowledge and the current time. */
export interface SystemPromptExtras {
  memories?: string[]
  /** The context block of the knowledge retrieved for the run (docs/api/knowledge.md, "In a run"); last, so the rest stays cacheable. */
  knowledge?: string
  now?: Date
}

/** One line per DISC style: how an assistant of that personality behaves. */
export const DISC_DESCRIPTIONS: Readonly<Record<string, string>> = {
  dominant: 'Dominant (DISC D): direct, decisive and results-oriented; get to the point and focus on outcomes.',
  influential: 'Influential (DISC I): enthusiastic, optimistic and sociable; be warm, encouraging and engaging.',
  steady: 'Steady (DISC S): calm, patient and supportive; be reassuring, consistent and a good listener.',
  conscientious: 'Conscientious (DISC C): precise, analytical and systematic; be accurate, thorough and well structured.',
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

/** A block of text: `\n` line endings, no trailing whitespace, no leading or trailing blank lines. */
function block(value: unknown): string {
  if (typeof value !== 'string') return ''
  return value
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/^\n+|\n+$/g, '')
}

/** One line: every run of whitespace (newlines included) becomes one space. */
function line(value: unknown): string {
  return typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : ''
}

/** `- item` lines of the non-blank items. */
function bullets(values: unknown): string {
  if (!Array.isArray(values)) return ''
  return values
    .map(line)
    .filter(Boolean)
    .map((item) => `- ${item}`)
    .join('\n')
}

/** `Heading:` then the body, or nothing when the body is empty. */
function section(heading: string, body: string): string {
  return body ? `${heading}\n${body}` : ''
}

/** `2026-11-21 14:03 UTC (Saturday)`. */
function stamp(now: Date): string {
  return `${now.toISOString().slice(0, 16).replace('T', ' ')} UTC (${WEEKDAYS[now.getUTCDay()]})`
}

/**
 * Composes an agent's system prompt with the template of this module's comment.
 * @returns plain text: sections with headings, separated by blank lines, no trailing whitespace.
 */
export function composeSystemPrompt(agent: SystemPromptAgent, extras: SystemPromptExtras = {}): string {
  const m = agent.metadata
  const name = line(agent.name) || 'an AI assistant'
  const role = line(m.role)
  const style = line(m.disc_personality).toLowerCase()
  const disc = Object.hasOwn(DISC_DESCRIPTIONS, style) ? DISC_DESCRIPTIONS[style] : ''
  const greetings = block(m.greetings)
  const now = extras.now && !Number.isNaN(extras.now.getTime()) ? extras.now : undefined
  const sections = [
    `You are ${name}.${role ? `\nYour role: ${role}` : ''}`,
    section('Your goal:', block(m.goal_statement)),
    section('Your backstory:', block(m.backstory)),
    section('Instructions:', block(agent.instruction)),
    section('Base instructions:', block(m.base_instructions)),
    section('Rules you must always follow:', block(m.guardrails)),
    section('Tone of voice:', block(m.tone_of_voice)),
    section('Personality:', disc),
    section('Greeting:', greetings && `At the start of a conversation, greet the user like this:\n${greetings}`),
    section('Examples of what users may ask you:', bullets(m.conversation_starters)),
    section('What you know about the user:', bullets(extras.memories)),
    now ? `Current date and time: ${stamp(now)}` : '',
    extras.knowledge ?? '',
  ]
  return sections.filter(Boolean).join('\n\n')
}
