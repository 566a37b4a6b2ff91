/**
 * English-like text for `npm run bench:knowledge` (bench/knowledge.ts): documents to train,
 * chunks to seed, questions to search with, and questions about one chunk (whose answer is known)
 * to measure how well retrieval finds it, reproducible from a seed.
 *
 * Words follow a Zipf-Mandelbrot law, as in real text: about 45% of the words are function words
 * (which PostgreSQL's English configuration drops as stop words), the rest content words whose
 * weight is 1 / (rank + 100), so that the commonest content word is in about a quarter of 250-word
 * chunks and a rank-10,000 word in a few per thousand. The first ranks are common English words,
 * the long tail (up to {@link VOCABULARY} words) pronounceable made-up words (names, product and
 * place names, jargon). Questions mix function words with 2-4 content words drawn from the same
 * law, so some match a few chunks and some a large share of them, as users' questions do.
 */

const FUNCTION_WORDS = (
  'the of and to a in is it that for on with as was be by this are or at from but not have an they which you were can all ' +
  'their has been if more when will would there what so about its into than them only other some these may then do any such ' +
  'no our most each should how where who while because both through between during after before over under again very we ' +
  'he she his her one also just out up those many much same own'
).split(' ')

/** Common English content words, roughly commonest first. */
const COMMON_WORDS = (
  'time people year way day thing man world life hand part child eye woman place work week case point government company ' +
  'number group problem fact make know take see come think look want give use find tell ask seem feel try leave call good ' +
  'new first last long great little old right big high different small large next early young important few public bad ' +
  'able system program question night home water room mother area money story month lot study book job word business issue ' +
  'side kind head house service friend father power hour game line end member law car city community name president team ' +
  'minute idea body information back parent face level office door health person art war history party result change ' +
  'morning reason research girl guy moment air teacher force education foot boy age policy process music market sense ' +
  'nation plan college interest death experience effect class control care field development role effort rate heart drug ' +
  'show leader light voice wife police mind price report decision son view relationship town road arm difference value ' +
  'building action model season society tax director position player record paper space ground form event official matter ' +
  'center couple site project activity star table need court oil situation cost industry figure street image phone data ' +
  'picture practice piece land product doctor wall patient worker news test movie north love support technology step baby ' +
  'computer type attention film tree source organization hair window evidence population site campaign material hospital ' +
  'church performance sign account pattern goal method theory analysis approach strategy network security quality file ' +
  'customer order payment invoice contract policy account password login user profile setting option feature update ' +
  'release version install server database query request response error message email notification schedule meeting ' +
  'calendar task ticket support agent tool workflow document folder upload download storage backup restore migration ' +
  'deploy cluster region instance memory disk network latency throughput bandwidth cache index table column row key ' +
  'token session cookie header permission role share invite workspace billing plan subscription trial discount refund ' +
  'shipping delivery warehouse inventory supplier vendor purchase budget forecast revenue profit margin expense audit ' +
  'compliance privacy consent retention encryption certificate firewall incident outage alert monitor dashboard metric ' +
  'chart export import format template draft review approval signature deadline milestone roadmap sprint backlog estimate ' +
  'reactor engine battery sensor valve pump pressure temperature voltage current circuit cable switch signal antenna ' +
  'engineer manager analyst designer developer operator technician consultant partner client visitor student employee ' +
  'training course lesson exam certificate library archive catalog journal article chapter section paragraph summary ' +
  'kitchen garden window floor ceiling roof bridge tunnel harbor airport station platform vehicle truck bicycle train ' +
  'river mountain forest island desert valley ocean lake coast weather storm rain snow wind summer winter spring autumn ' +
  'coffee lunch dinner breakfast menu recipe bread cheese fruit vegetable chicken salad soup dessert bottle glass plate ' +
  'doctor nurse clinic medicine treatment therapy symptom diagnosis vaccine allergy injury recovery appointment insurance ' +
  'reset configure enable disable connect migrate archive cancel renew verify approve reject assign escalate resolve ' +
  'measure calculate compare predict optimize reduce increase improve replace repair inspect maintain operate monitor ' +
  'quick slow heavy light bright dark warm cold safe secure private public remote local global internal external manual ' +
  'automatic daily weekly monthly annual current previous recent standard custom default advanced basic primary secondary'
)
  .split(/\s+/)
  .filter(Boolean)
  .filter((word, index, all) => all.indexOf(word) === index)

const SYLLABLES = [
  'ba',
  'ce',
  'di',
  'fo',
  'gu',
  'ka',
  'le',
  'mi',
  'no',
  'pu',
  'ra',
  'se',
  'ti',
  'vo',
  'zu',
  'bra',
  'cle',
  'dri',
  'fla',
  'gro',
  'pla',
  'stri',
  'tor',
  'ven',
  'mar',
  'lin',
  'ser',
  'dan',
]

/** Distinct content words. */
export const VOCABULARY = 30_000
/** The Zipf-Mandelbrot offset: the ranks the function words take before the content words. */
const RANK_OFFSET = 100

/** The content word of rank `rank` (from 0): a common English word, then three made-up syllables. */
function wordOf(rank: number): string {
  if (rank < COMMON_WORDS.length) return COMMON_WORDS[rank]
  const n = rank - COMMON_WORDS.length
  const base = SYLLABLES.length
  return SYLLABLES[n % base] + SYLLABLES[Math.floor(n / base) % base] + SYLLABLES[Math.floor(n / base / base) % base]
}

const WORDS = Array.from({ length: VOCABULARY }, (_, rank) => wordOf(rank))
const RANKS = new Map(WORDS.map((word, rank) => [word, rank]))
const CUMULATIVE = (() => {
  const cumulative = new Float64Array(VOCABULARY)
  let sum = 0
  for (let rank = 0; rank < VOCABULARY; rank++) cumulative[rank] = sum += 1 / (rank + 1 + RANK_OFFSET)
  for (let rank = 0; rank < VOCABULARY; rank++) cumulative[rank] /= sum
  return cumulative
})()

const QUESTION_STARTS = [
  'How do I',
  'What is the',
  'Why does the',
  'Where can I find the',
  'Can you explain the',
  'When should we',
  'Which',
  'Tell me about the',
  'Is there a',
  'Who handles the',
]

/** The content words of `text` (text of this corpus), each once, rarest (highest rank) first. */
export function contentWordsOf(text: string): string[] {
  const words = new Set(text.toLowerCase().match(/[a-z]+/g) ?? [])
  return [...words].filter((word) => RANKS.has(word)).sort((a, b) => RANKS.get(b)! - RANKS.get(a)!)
}

/** Kinds of {@link Corpus.questionAbout}, in the order they take turns. */
export const QUESTION_KINDS = ['partial', 'reworded', 'loose'] as const
export type QuestionKind = (typeof QUESTION_KINDS)[number]

/** A reproducible source of English-like text. */
export class Corpus {
  #state: number

  constructor(seed: number) {
    this.#state = seed >>> 0
  }

  /** mulberry32: a uniform number in [0, 1). */
  random(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** A content word drawn from the Zipf-Mandelbrot law. */
  contentWord(): string {
    const u = this.random()
    let low = 0
    let high = VOCABULARY - 1
    while (low < high) {
      const mid = (low + high) >>> 1
      if (CUMULATIVE[mid] < u) low = mid + 1
      else high = mid
    }
    return WORDS[low]
  }

  word(): string {
    return this.random() < 0.45 ? FUNCTION_WORDS[Math.floor(this.random() * FUNCTION_WORDS.length)] : this.contentWord()
  }

  /** A sentence of 8-20 words. */
  sentence(): string {
    const length = 8 + Math.floor(this.random() * 13)
    const words: string[] = []
    for (let i = 0; i < length; i++) words.push(this.word())
    const first = words[0]
    words[0] = first[0].toUpperCase() + first.slice(1)
    return `${words.join(' ')}.`
  }

  /**
   * Text of exactly `chars` characters (ASCII, so as many bytes) when `exact`, else of whole
   * sentences until at least `chars` and cut at the last word boundary before `chars`; paragraphs
   * of about five sentences. `title` (if any) is its first line.
   */
  text(chars: number, o: { title?: string; exact?: boolean } = {}): string {
    let text = o.title ? `${o.title}\n\n` : ''
    let sentences = 0
    while (text.length < chars) {
      text += this.sentence()
      sentences++
      text += sentences % 5 === 0 ? '\n\n' : ' '
    }
    if (o.exact) return text.slice(0, chars - 1) + '.'
    const cut = text.lastIndexOf(' ', chars)
    return (cut > chars / 2 ? text.slice(0, cut) : text.slice(0, chars)).trim()
  }

  /**
   * A question whose answer is `text` (a chunk of this corpus), worded as a user who knows the
   * chunk's subject might ask it: a question start and
   * - `partial`: the chunk's two rarest content words and one of its common ones (rank < 300);
   * - `reworded`: its rarest and third-rarest content words and a common word (rank < 200) the
   *   chunk does not hold, so no chunk holds every word of the question;
   * - `loose`: its second-rarest content word, two of its words of middling frequency (ranks
   *   300-3,000) and a common word it does not hold.
   */
  questionAbout(text: string, kind: QuestionKind): string {
    const words = contentWordsOf(text)
    const held = new Set(words)
    const pick = (from: string[]) => from[Math.floor(this.random() * from.length)]
    const ranked = (low: number, high: number) => words.filter((word) => RANKS.get(word)! >= low && RANKS.get(word)! < high)
    const absentCommon = () => {
      for (;;) {
        const word = WORDS[Math.floor(this.random() * 200)]
        if (!held.has(word)) return word
      }
    }
    let chosen: string[]
    if (kind === 'partial') chosen = [words[0], words[1], pick(ranked(0, 300)) ?? words.at(-1)!]
    else if (kind === 'reworded') chosen = [words[0], words[2], absentCommon()]
    else {
      const middling = ranked(300, 3000)
      const first = pick(middling)
      const second = pick(middling.filter((word) => word !== first))
      chosen = [words[1], ...[first, second].filter(Boolean), absentCommon()]
    }
    // The question's word order is not the chunk's.
    for (let i = chosen.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1))
      ;[chosen[i], chosen[j]] = [chosen[j], chosen[i]]
    }
    return `${QUESTION_STARTS[Math.floor(this.random() * QUESTION_STARTS.length)]} ${chosen.join(' ')}?`
  }

  /** A user's question: a question start and 2-4 content words. */
  question(): string {
    const words = Array.from({ length: 2 + Math.floor(this.random() * 3) }, () => this.contentWord())
    return `${QUESTION_STARTS[Math.floor(this.random() * QUESTION_STARTS.length)]} ${words.join(' ')}?`
  }
}
