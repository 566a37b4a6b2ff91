/**
 * `npm run console:build`: builds the web console into dist/console now, whether or not the
 * sources changed since the last build (docs/console.md). `npm start` builds only when they did.
 */
import { rmSync } from 'node:fs'
import path from 'node:path'
import { CONSOLE_BUILD_DIR, ensureConsoleBuilt } from '../http/console-build.ts'

rmSync(path.join(CONSOLE_BUILD_DIR, '.source-hash'), { force: true })
const outcome = await ensureConsoleBuilt({ info: (_fields, message) => console.log(message) })
if (outcome === 'unavailable') {
  console.error('Vite is not installed: run npm ci (with the dev dependencies) first')
  process.exit(1)
}
if (outcome === 'current') console.log(`the web console in ${path.relative(process.cwd(), CONSOLE_BUILD_DIR)} is current`)
