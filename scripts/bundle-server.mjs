// What starts a process as one file: `npm run build` emits dist/ with tsc (same layout as src/),
// then bundles each entry below with the packages it loads into `<out>.cjs`, and replaces the
// tsc output `<out>.js` with a small module that loads the bundle through
// dist/util/bundle-loader.js (V8's code cache: see there) and re-exports it. Node resolving,
// reading and compiling ~2,000 small modules (zod, Fastify, the MCP SDK, kysely…) was most of
// the time from `warren serve` to listening and of `warren mcp` to its first answer.
// Client commands keep loading their few unbundled modules from dist/.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { build } from 'esbuild';

const entries = [
  // The server; its code cache is written once it listens (`serve` resolved).
  { entry: 'src/app/server.ts', out: 'dist/app/server', warmAfter: 'serve' },
  // `warren mcp`'s relay (the MCP SDK's client and stdio server); it has relayed its first
  // answers by then (the client's `initialize` comes at once).
  { entry: 'src/surfaces/cli/mcp-bridge.ts', out: 'dist/surfaces/cli/mcp-bridge', saveAfterMs: 300 },
];

for (const { entry, out, warmAfter, saveAfterMs } of entries) {
  await build({
    entryPoints: [entry],
    outfile: `${out}.cjs`,
    bundle: true,
    platform: 'node',
    // CommonJS: V8's code cache needs a script, and Node 20 caches no ES module's code.
    format: 'cjs',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    // Native addons and worker entry files must stay files of their own in node_modules.
    external: ['better-sqlite3', 'pg-native', 'thread-stream', 'pino-pretty'],
    // The sources find their package (bin/, examples/, dist/web) from their own URL.
    define: { 'import.meta.url': '__warrenModuleUrl' },
    banner: { js: "var __warrenModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
  const code = asciiOnly(readFileSync(`${out}.cjs`, 'utf8'));
  writeFileSync(`${out}.cjs`, code);
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  writeFileSync(`${out}.js`, stub(out, hash, await exportNames(entry), { warmAfter, saveAfterMs }));
  // Code caches of earlier builds (a build into an existing dist/) are never read again.
  for (const f of readdirSync(dirname(out))) {
    if (f.startsWith(`${basename(out)}.cjs.`) && f.endsWith('.cache')) rmSync(join(dirname(out), f));
  }
  rmSync(`${out}.js.map`, { force: true });
}

/**
 * The bundle as ASCII: Node then reads it into a one-byte string (decoding 7 MB of UTF-8
 * into a two-byte one took 25–65 ms, and V8 scans one-byte source faster). esbuild already
 * escapes strings, templates and identifiers; what it leaves are comments and regular
 * expression literals, where `\uXXXX` (per UTF-16 unit) means the same character.
 */
function asciiOnly(code) {
  // After a backslash the escape would read as an escaped backslash: none today; say so if one comes.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, named by its bounds
  if (/\\[^\x00-\x7f]/.test(code)) throw new Error('bundle: a backslash before a non-ASCII character');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, named by its bounds
  return code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The names `entry` exports (values and types alike; a type reads as undefined). */
async function exportNames(entry) {
  const result = await build({
    entryPoints: [entry],
    bundle: false,
    write: false,
    format: 'esm',
    metafile: true,
    outdir: 'unused',
    logLevel: 'warning',
  });
  return Object.values(result.metafile.outputs).flatMap((o) => o.exports ?? []);
}

function stub(out, hash, names, { warmAfter, saveAfterMs }) {
  const name = out.split('/').pop();
  const loader = relative(out.replace(/\/[^/]+$/, ''), 'dist/util/bundle-loader.js');
  const lines = [
    `// Written by scripts/bundle-server.mjs: ${entriesSource(out)} is ./${name}.cjs, one bundle,`,
    '// compiled from V8 code cache when there is one (src/util/bundle-loader.ts).',
    `import { loadBundle } from '${loader.startsWith('.') ? loader : `./${loader}`}';`,
    `const bundle = loadBundle(new URL('./${name}.cjs', import.meta.url), '${hash}'${saveAfterMs === undefined ? '' : `, { saveAfterMs: ${saveAfterMs} }`});`,
    'const m = bundle.exports;',
  ];
  for (const n of names) {
    if (n === warmAfter) {
      lines.push(
        `export async function ${n}(...args) {`,
        `  const result = await m.${n}(...args);`,
        '  bundle.saveCache();',
        '  return result;',
        '}',
      );
    } else lines.push(`export const ${n} = m.${n};`);
  }
  return `${lines.join('\n')}\n`;
}

function entriesSource(out) {
  return `${out.replace(/^dist\//, 'src/')}.ts`;
}
