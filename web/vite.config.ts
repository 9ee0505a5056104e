import { defineConfig } from 'vitest/config'
import react from '@vitejs/plugin-react'

// The build goes straight into the Go server's embedded directory
// (server/ui, see server/static.go), where it is committed so that
// `go install` needs no Node. scripts/web.sh rebuilds it in CI and fails if
// the result differs from what is committed.
export default defineConfig({
  plugins: [react()],
  base: '/',
  build: {
    outDir: '../server/ui',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 700,
  },
  server: {
    // `hearth serve --allow-origin http://localhost:5173` lets the dev
    // server's pages call the API on its own port.
    port: 5173,
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'],
  },
})
