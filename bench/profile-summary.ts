/**
 * Summarises a V8 `.cpuprofile` of the service (from `BENCH_PROFILE=dir npm run bench`): self
 * time by package, the same with Node's internals and native code charged to the nearest package
 * or project frame above them (what `fetch`, web streams or socket writes cost whoever called
 * them), the hottest functions by self time and by inclusive time, as shares of the busy
 * (non-idle) time.
 *
 *   npx tsx bench/profile-summary.ts PROFILE.cpuprofile [--row=e] [--results=bench/results/latest.json] [--top=25]
 *
 * `--row` keeps only the samples taken during that row's measured run (its window is in the
 * results JSON), so start-up and the other rows do not blur the picture. `--from=S` and `--to=S`
 * keep the samples between S seconds after the profile's start (a worker's profile from
 * `BENCH_PROFILE=dir npm run bench:command-room`, whose firings come well after its start-up).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

const args = process.argv.slice(2)
const option = (name: string) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3)
const file = args.find((arg) => !arg.startsWith('--'))
if (!file) throw new Error('usage: tsx bench/profile-summary.ts FILE.cpuprofile [--row=e] [--results=FILE] [--top=N]')
const top = Number(option('top') ?? 25)

let window: { startUs: number; endUs: number } | undefined
const rowKey = option('row')
if (rowKey) {
  const resultsFile = option('results') ?? path.resolve(import.meta.dirname, 'results', 'latest.json')
  const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as { rows: { key: string; window: { startUs: number; endUs: number } }[] }
  window = results.rows.find((row) => row.key === rowKey)?.window
  if (!window) throw new Error(`row ${rowKey} is not in ${resultsFile}`)
}

/** Where a frame's code lives: a package, the project's own code, Node internals or V8. */
function packageOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)'
  const modules = url.lastIndexOf('node_modules/')
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/')
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]
  }
  if (url.startsWith('node:')) return 'node:internal'
  const match = /\/(src|routers|entities|bench)\/(.*)$/.exec(url)
  return match ? `${match[1]}/${match[2]}` : url
}

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const seconds = (name: string) => (option(name) === undefined ? undefined : Number(option(name)))
const from = seconds('from')
const to = seconds('to')
if (from !== undefined || to !== undefined) {
  if (window) throw new Error('--row and --from/--to exclude each other')
  window = { startUs: profile.startTime + (from ?? 0) * 1e6, endUs: to === undefined ? Infinity : profile.startTime + to * 1e6 }
}
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const parentOf = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
const label = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame
  const pkg = packageOf(url, functionName)
  return `${functionName || '(anonymous)'}  ${pkg}${url && !url.startsWith('node:') ? `:${lineNumber + 1}` : ''}`
}

let busy = 0
let sampled = 0
let time = profile.startTime
const byPackage = new Map<string, number>()
const bySelf = new Map<string, number>()
const byInclusive = new Map<string, number>()
const byCaller = new Map<string, number>()
const add = (map: Map<string, number>, key: string, micros: number) => map.set(key, (map.get(key) ?? 0) + micros)
profile.samples.forEach((id, index) => {
  const micros = profile.timeDeltas[index] ?? 0
  time += micros
  if (window && (time < window.startUs || time > window.endUs)) return
  sampled += micros
  const node = byId.get(id)!
  if (node.callFrame.functionName === '(idle)') return
  busy += micros
  add(byPackage, packageOf(node.callFrame.url, node.callFrame.functionName), micros)
  add(bySelf, label(node), micros)
  // Node internals and native code charged to the nearest package or project frame that called them.
  let caller = 'node:internal / (native) only'
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const frame = byId.get(at)!.callFrame
    const pkg = packageOf(frame.url, frame.functionName)
    if (pkg !== 'node:internal' && pkg !== '(native)' && pkg !== '(root)') {
      caller = pkg
      break
    }
  }
  add(byCaller, caller, micros)
  const seen = new Set<string>()
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const key = label(byId.get(at)!)
    if (!seen.has(key)) add(byInclusive, key, micros)
    seen.add(key)
  }
})
if (sampled === 0) throw new Error('no samples in the window: is this the profile of that run?')

const share = (micros: number) => `${((micros / busy) * 100).toFixed(1).padStart(5)}%`
const list = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}:`)
  for (const [key, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${share(micros)}  ${key}`)
}
console.log(`busy ${(busy / 1e6).toFixed(2)} s of ${(sampled / 1e6).toFixed(2)} s sampled${rowKey ? ` during row (${rowKey})` : ''}`)
list('self time by package', byPackage)
list('self time, node internals charged to their nearest package caller', byCaller)
list('hottest functions, self time', bySelf)
list('hottest functions, inclusive time', byInclusive)
