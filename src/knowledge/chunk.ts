/**
 * Token chunks of a document's extracted text (docs/api/knowledge.md, "Extraction and
 * chunking"): the pieces that are embedded, indexed and retrieved. Tokens are counted with the
 * `cl100k_base` encoding (that of `text-embedding-3-small`, the default embedding model) by
 * gpt-tokenizer, whose ranks ship inside the package: nothing is fetched. The cutting is
 * LangChain's RecursiveCharacterTextSplitter with that count as its length, so cuts fall between
 * paragraphs, then lines, then words, and inside a word only when a word alone is too long.
 *
 * Pure and in memory; the event loop gets a turn every 20 ms of splitting. Measured on the
 * project's 2-core machine with the default sizes: 10 KB of prose in about 10 ms, 1 MB in 0.6 s,
 * 5 MB (1.1 M tokens, 4,100 chunks) in 2.6 s; text without spaces is the slow case, 1.3 to
 * 4.5 s per MB (a run of one letter, random letters, CJK without punctuation, emoji).
 */
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters'
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base'

/** Tokens per chunk at most, by default. */
export const CHUNK_TOKENS = 400
/** Tokens at most that a chunk repeats from the end of the one before it, by default. */
export const OVERLAP_TOKENS = 60
/** The smallest `chunkTokens` accepted: below it a single long word would not fit. */
export const MIN_CHUNK_TOKENS = 32

/** A chunk of a text, in order. */
export interface Chunk {
  /** Position in the text's chunks, from 0. */
  index: number
  text: string
  /** Its tokens, as {@link countTokens} counts them; never more than the chunk size. */
  tokens: number
}

/** Sizes of {@link chunkText}'s chunks, in tokens. */
export interface ChunkOptions {
  /** Tokens per chunk at most; an integer of at least {@link MIN_CHUNK_TOKENS}. */
  chunkTokens?: number
  /** Tokens at most repeated from the previous chunk; an integer from 0 to half `chunkTokens`. */
  overlapTokens?: number
}

/**
 * The BPE merge of one pre-token costs the square of its length (in gpt-tokenizer as in every
 * port of tiktoken): 100,000 letters in a row take seconds, a million take minutes. Runs longer
 * than this many characters are counted in pieces of this length, which keeps a file of one
 * endless word linear and adds about one token per piece.
 */
const RUN_CHARS = 128
const LONG_RUN = new RegExp(`\\S{${RUN_CHARS + 1},}|\\s{${RUN_CHARS + 1},}`, 'g')
/** The text of a special token such as `<|endoftext|>` is counted as text, not refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() }
/** How long the splitter may hold the event loop before it lets other work run. */
const SLICE_MS = 20

/**
 * Tokens of `text` in the `cl100k_base` encoding. Exact for ordinary text; a run of more than
 * 128 characters without a space (or of spaces) is counted in 128-character pieces, so it may
 * count slightly more than the model would, never in quadratic time.
 * @returns an integer ≥ 0 (0 for the empty string).
 */
export function countTokens(text: string): number {
  let total = 0
  let from = 0
  for (const run of text.matchAll(LONG_RUN)) {
    total += countCl100k(text.slice(from, run.index), AS_TEXT)
    const end = run.index + run[0].length
    for (let at = run.index; at < end; ) {
      let to = Math.min(at + RUN_CHARS, end)
      // Never cut between the two halves of a surrogate pair.
      if (to < end && isHighSurrogate(text.charCodeAt(to - 1))) to += 1
      total += countCl100k(text.slice(at, to), AS_TEXT)
      at = to
    }
    from = end
  }
  return total + countCl100k(text.slice(from), AS_TEXT)
}

/**
 * Cuts `text` into chunks of at most `chunkTokens` tokens, each starting with up to
 * `overlapTokens` tokens from the end of the one before, so a passage cut at a boundary is whole
 * in one of the two.
 *
 * How: LangChain's recursive splitter cuts the text into bodies of `chunkTokens - overlapTokens`
 * tokens at most, preferring paragraph breaks, then line breaks, then spaces. Each chunk after
 * the first is its body preceded by the end of the previous body: its last pieces (paragraphs,
 * lines or words, as the same splitter cuts them), as many as fit in `overlapTokens`. A chunk's
 * text is the document's, trimmed, with the whitespace where the overlap meets the body
 * reduced to one paragraph break, line break or space.
 *
 * @returns chunks in text order, `index` from 0, none empty; `[]` for text that is only
 *   whitespace.
 * @throws RangeError for sizes out of range (see {@link ChunkOptions}).
 */
export async function chunkText(
  text: string,
  { chunkTokens = CHUNK_TOKENS, overlapTokens = OVERLAP_TOKENS }: ChunkOptions = {},
): Promise<Chunk[]> {
  if (!Number.isInteger(chunkTokens) || chunkTokens < MIN_CHUNK_TOKENS) {
    throw new RangeError(`chunkTokens must be an integer of at least ${MIN_CHUNK_TOKENS}`)
  }
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0 || overlapTokens > chunkTokens / 2) {
    throw new RangeError('overlapTokens must be an integer from 0 to half of chunkTokens')
  }
  const chunks = await cut(text, chunkTokens, overlapTokens, measurer())
  return chunks.map((chunk, index) => ({ index, ...chunk }))
}

/** Token counts of one chunking call: remembered (the splitter counts each piece several times) and paced. */
function measurer(): Measure {
  const known = new Map<string, number>()
  let since = performance.now()
  return async (piece) => {
    if (performance.now() - since > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      since = performance.now()
    }
    // The splitter's last resort cuts a word into UTF-16 code units, so into halves of surrogate
    // pairs, which the tokenizer would count as one replacement character each. Half of the most
    // a 4-byte character can count (4) keeps the sum of the halves an upper bound.
    if (piece.length === 1 && isSurrogate(piece.charCodeAt(0))) return 2
    let tokens = known.get(piece)
    if (tokens === undefined) {
      tokens = countTokens(piece)
      known.set(piece, tokens)
    }
    return tokens
  }
}

type Measure = (piece: string) => Promise<number>

/** Tokens of a body left free for the break between the overlap and the body. */
const JOIN_TOKENS = 1

type Splitter = (size: number) => RecursiveCharacterTextSplitter

async function cut(text: string, chunkTokens: number, overlapTokens: number, measure: Measure): Promise<Array<Omit<Chunk, 'index'>>> {
  const splitter: Splitter = (size) => new RecursiveCharacterTextSplitter({ chunkSize: size, chunkOverlap: 0, lengthFunction: measure })
  const bodies = await bodiesOf(text, overlapTokens ? chunkTokens - overlapTokens - JOIN_TOKENS : chunkTokens, splitter)
  // Whole paragraphs or lines when the last ones fit in the overlap; else pieces of half of it,
  // the last of which fits even when it counts a little more joined than in parts.
  const tails = [splitter(overlapTokens || 1), splitter(Math.max(1, Math.floor(overlapTokens / 2)))]
  const chunks: Array<Omit<Chunk, 'index'>> = []
  for (const [i, [start, end]] of bodies.entries()) {
    const body = text.slice(start, end)
    let chunk = { text: body, tokens: countTokens(body) }
    if (overlapTokens && i > 0) {
      const [previousStart, previousEnd] = bodies[i - 1]
      const previous = text.slice(previousStart, previousEnd)
      const gap = gapOf(text.slice(previousEnd, start))
      // The overlap gives way, down to none, if the joined text counts more than its parts.
      for (let budget = overlapTokens; budget > 0; ) {
        const tail = await tailOf(previous, tails, budget, measure)
        if (!tail) break
        const joined = tail + gap + body
        const tokens = countTokens(joined)
        if (tokens <= chunkTokens) {
          chunk = { text: joined, tokens }
          break
        }
        budget -= tokens - chunkTokens
      }
    }
    chunks.push(chunk)
  }
  return chunks
}

/**
 * The bodies of the chunks, as [start, end) offsets in `text`: the splitter's pieces of at most
 * `bodyTokens` tokens. The splitter adds up the counts of the parts it joins; a piece whose own
 * count is higher (a token or two, now and then) is cut again, smaller in proportion.
 */
async function bodiesOf(text: string, bodyTokens: number, splitter: Splitter): Promise<Array<[number, number]>> {
  const bodies: Array<[number, number]> = []
  for (const [start, end] of locate(text, await splitter(bodyTokens).splitText(text))) {
    const tokens = countTokens(text.slice(start, end))
    if (tokens <= bodyTokens) {
      bodies.push([start, end])
      continue
    }
    const smaller = Math.min(bodyTokens - 1, Math.floor((bodyTokens * bodyTokens) / tokens))
    if (smaller < 1) throw new Error('A chunk could not be cut to size')
    for (const [innerStart, innerEnd] of await bodiesOf(text.slice(start, end), smaller, splitter)) {
      bodies.push([start + innerStart, start + innerEnd])
    }
  }
  return bodies
}

/**
 * The end of `body` to repeat: its last pieces, as the first of `splitters` that has a piece
 * small enough cuts it, that together count at most `budget` tokens; '' when none has.
 */
async function tailOf(body: string, splitters: RecursiveCharacterTextSplitter[], budget: number, measure: Measure): Promise<string> {
  for (const splitter of splitters) {
    const spans = locate(body, await splitter.splitText(body))
    let from = body.length
    for (let i = spans.length - 1; i >= 0; i--) {
      if ((await measure(body.slice(spans[i][0]))) > budget) break
      from = spans[i][0]
    }
    if (from < body.length) return body.slice(from)
  }
  return ''
}

/**
 * Where the splitter's pieces stand in `text`, as [start, end) offsets. Pieces are trimmed, in
 * order, and only whitespace lies between them, so the first match of each after the one before
 * is the piece. The splitter cuts a word too long for one piece between UTF-16 code units; a cut
 * between the halves of a surrogate pair is moved after the pair.
 */
function locate(text: string, pieces: string[]): Array<[number, number]> {
  const spans: Array<[number, number]> = []
  let searchFrom = 0
  let covered = 0
  for (const piece of pieces) {
    const at = text.indexOf(piece, searchFrom)
    searchFrom = at + piece.length
    let end = searchFrom
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end += 1
    const start = Math.max(at, covered)
    if (start >= end) continue
    spans.push([start, end])
    covered = end
  }
  return spans
}

/** Whitespace between two pieces, reduced: a paragraph break, a line break, a space, or nothing (a cut inside a word). */
function gapOf(whitespace: string): string {
  if (!whitespace) return ''
  const breaks = whitespace.split('\n').length - 1
  return breaks >= 2 ? '\n\n' : breaks === 1 ? '\n' : ' '
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

function isSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdfff
}
