// The server as one file: `npm run build` emits dist/ with tsc (same layout as src/), then
// replaces dist/server.js — what `warren serve` imports — with a bundle of it and of the
// packages it loads. Node resolving and reading ~2,000 small modules (zod, Fastify, the MCP
// SDK, kysely…) was most of the time from `warren serve` to listening; one file is not.
// Client commands keep loading their few unbundled modules from dist/.
import { writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const result = await build({
  entryPoints: { server: 'src/server.ts' },
  outdir: 'dist',
  // What the server imports dynamically (the MCP SDK on the first MCP connection, pg for a
  // postgres:// store, a runtime's SDK on its first spawn…) becomes a chunk of its own in
  // dist/chunks/, read and compiled only when used.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  metafile: true,
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
if (process.env.WARREN_BUNDLE_META) writeFileSync(process.env.WARREN_BUNDLE_META, JSON.stringify(result.metafile));
