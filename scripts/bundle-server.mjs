// The server as one file: `npm run build` emits dist/ with tsc (same layout as src/), then
// replaces dist/server.js — what `warren serve` imports — with a bundle of it and of the
// packages it loads. Node resolving and reading ~2,000 small modules (zod, Fastify, the MCP
// SDK, kysely…) was most of the time from `warren serve` to listening; one file is not.
// Client commands keep loading their few unbundled modules from dist/.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/server.ts'],
  outfile: 'dist/server.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  // Native addons and worker entry files must stay files of their own in node_modules.
  external: ['better-sqlite3', 'pg-native', 'thread-stream', 'pino-pretty'],
  // CommonJS packages inside an ESM bundle still call require() for Node's built-ins.
  banner: {
    js: "import { createRequire as __warrenRequire } from 'node:module'; const require = __warrenRequire(import.meta.url);",
  },
});
