/**
 * Regular expressions written by users, matched with a time limit.
 *
 * A backtracking engine such as V8's can take exponential or polynomial time on some patterns:
 * `(a+)+$` against 40 `a`s and a `b` never ends, and `a*a*b` against 2,000 `a`s took 2.3 s when
 * measured (10,000 did not end within a minute). Heuristic checks (star height, as `safe-regex`
 * does) pass `a*a*b`, and no length limit on the text short of a few hundred characters bounds
 * such a pattern. So the match runs through `node:vm` with its `timeout`, which V8 honours inside
 * a regular expression's backtracking: a match that takes too long is stopped, and the caller is
 * told so. The limit blocks this process's event loop for at most `timeoutMs` per match.
 *
 * Syntax: JavaScript's, compiled with the `u` flag (Unicode: `.` is one code point, and stray
 * escapes such as `\-` outside a class are errors instead of silently meaning the character).
 */
import { createContext, Script, type Context } from 'node:vm'

/** Flags every user pattern is compiled with (module comment). */
const FLAGS = 'u'

/** V8's prefix of a syntax error: `Invalid regular expression: /<pattern>/<flags>: `. */
const SYNTAX_PREFIX = 'Invalid regular expression: '

/**
 * Why `pattern` does not compile, in the engine's words without the pattern repeated
 * ("Unterminated group"), or null when it compiles. Compiling never backtracks.
 */
export function regexProblem(pattern: string): string | null {
  try {
    new RegExp(pattern, FLAGS)
    return null
  } catch (error) {
    const message = error instanceof Error ? error.message : 'it does not compile'
    return message.startsWith(SYNTAX_PREFIX) ? message.slice(message.lastIndexOf(': ') + 2) : message
  }
}

/** The one script ever run in the sandbox: the pattern and the text are data, never code. */
const MATCH = new Script(`new RegExp(pattern, ${JSON.stringify(FLAGS)}).test(text)`)
/** The sandbox: its globals and the context made of them, once (a context costs about a millisecond, a match in it a fraction of one). */
let sandbox: { globals: { pattern: string; text: string }; context: Context } | undefined

function sandboxOf(): NonNullable<typeof sandbox> {
  if (!sandbox) {
    const globals = { pattern: '', text: '' }
    // createContext contextifies `globals` itself: what is written to it is what the script reads.
    sandbox = { globals, context: createContext(globals) }
  }
  return sandbox
}

/**
 * Whether `pattern` matches anywhere in `text` (unanchored, as `RegExp.prototype.test`), within
 * `timeoutMs` (wall-clock time, measured by the watchdog of `node:vm`).
 * @returns true or false, or `'timeout'` when the match was stopped at `timeoutMs`.
 * @throws SyntaxError when `pattern` does not compile (check it with {@link regexProblem} first).
 */
export function regexTest(pattern: string, text: string, timeoutMs: number): boolean | 'timeout' {
  const { globals, context } = sandboxOf()
  globals.pattern = pattern
  globals.text = text
  try {
    return MATCH.runInContext(context, { timeout: timeoutMs }) === true
  } catch (error) {
    // Not `instanceof Error`: the timeout error belongs to the sandbox's realm.
    if (typeof error === 'object' && error !== null && 'code' in error && error.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return 'timeout'
    throw error
  } finally {
    // The sandbox outlives the call: it must not keep a large output alive.
    globals.text = ''
  }
}
