/**
 * Vite's build of the web console (docs/console.md): the app below this folder, served by the
 * service under /console. src/http/console-build.ts runs it (output in dist/console); `npm run
 * console:dev` serves it with hot reload and sends /trpc to a service on port 3000.
 */
import react from '@vitejs/plugin-react'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

const here = fileURLToPath(new URL('.', import.meta.url))

export default defineConfig({
  root: here,
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The first screen's budget is 250 KB gzipped (docs/console.md); the reports say where it goes.
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1500,
  },
  server: { proxy: { '/trpc': { target: 'http://127.0.0.1:3000', ws: true } } },
})
