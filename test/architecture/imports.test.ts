/**
 * The layers of DESIGN.md, held against the code's own imports: a file imports only its own
 * floor's folder or the floors below, never a sibling folder of its floor, and no files import
 * each other in a circle across folders. docs/architecture.md draws the same floors.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { builtinPlugins } from '../../src/syscalls/plugins.ts';
import { cycles, type Edge, importsOf, ROOT, sourceFiles } from './graph.ts';

/**
 * Top to bottom. Folders on one floor are siblings: neither imports the other. A floor may
 * import every floor below it.
 */
export const FLOORS: ReadonlyArray<readonly string[]> = [
  ['src/main.ts'],
  // The composition root: `serve()` assembles a warren and its surfaces.
  ['src/app'],
  // Thin adapters. The docs are written from the CLI's specs; the HTTP surface hosts MCP's
  // Streamable HTTP route; the CLI's MCP relay uses MCP's client transport.
  ['src/surfaces/docs'],
  ['src/surfaces/cli'],
  ['src/surfaces/http'],
  ['src/surfaces/mcp'],
  // What `serve` reads before it starts anything.
  ['src/config'],
  // The one door: the table and the gate, built from the loaded plugins, and the Warren
  // whose `call` every surface takes.
  ['src/syscalls'],
  // Policy. `core` is the kernel's own syscalls; see the plugin rule below.
  ['src/plugins'],
  // The contract a plugin implements: the Syscall and Plugin types, schemas, tiers.
  ['src/contract'],
  // Services beside the kernel that the door assembles.
  ['src/auth', 'src/cluster', 'src/observability'],
  ['src/kernel'],
  ['src/store', 'src/runtimes'],
  // The ground floor: vocabulary every layer speaks (errors, principals, usage), then helpers.
  ['src/vocab'],
  ['src/util'],
];

/** The folder of `file` on the floor table, with its floor's index (0 = top). */
export function placeOf(file: string): { folder: string; floor: number } | null {
  let best: { folder: string; floor: number } | null = null;
  FLOORS.forEach((folders, floor) => {
    for (const folder of folders) {
      const inside = file === folder || file.startsWith(`${folder}/`);
      if (inside && (!best || folder.length > best.folder.length)) best = { folder, floor };
    }
  });
  return best;
}

/** Why an edge breaks the floors, or null when it runs downhill or stays inside its folder. */
export function layerBreach(e: Edge): string | null {
  const from = placeOf(e.from);
  const to = placeOf(e.to);
  if (!from) return `${e.from} is on no floor (add its folder to FLOORS)`;
  if (!to) return `${e.from} imports ${e.to}, which is on no floor`;
  if (from.folder === to.folder) return null;
  if (to.floor < from.floor) return `${e.from} imports ${e.to}: upward (${from.folder} -> ${to.folder})`;
  if (to.floor === from.floor)
    return `${e.from} imports ${e.to}: across one floor (${from.folder} -> ${to.folder})`;
  return null;
}

/** A plugin folder imports itself, `core`, and the plugins it declares in `dependsOn`. */
export function pluginBreach(e: Edge, dependsOn: ReadonlyMap<string, readonly string[]>): string | null {
  const name = (path: string) => /^src\/plugins\/([^/]+)\//.exec(path)?.[1];
  const from = name(e.from);
  const to = name(e.to);
  if (!from || !to || from === to || to === 'core') return null;
  if ((dependsOn.get(from) ?? []).includes(to)) return null;
  return `${e.from} imports ${e.to}: plugin ${from} does not depend on ${to}`;
}

const folderOf = (file: string) => file.slice(0, file.lastIndexOf('/'));

describe('the import graph', () => {
  const files = sourceFiles('src');
  const edges = files.flatMap((f) => importsOf(f));

  it('reads the imports it checks (static, type-only, re-exports and dynamic)', () => {
    const sample = importsOf(
      'src/x/a.ts',
      [
        "import { a } from './b.ts';",
        "import type { T } from '../y/c.ts';",
        "import { type U, type V } from './d.ts';",
        "export { e } from './e.ts';",
        "const f = await import('../z/f.ts');",
        "import { g } from 'zod';",
      ].join('\n'),
    );
    assert.deepEqual(sample, [
      { from: 'src/x/a.ts', to: 'src/x/b.ts', typeOnly: false },
      { from: 'src/x/a.ts', to: 'src/y/c.ts', typeOnly: true },
      { from: 'src/x/a.ts', to: 'src/x/d.ts', typeOnly: true },
      { from: 'src/x/a.ts', to: 'src/x/e.ts', typeOnly: false },
      { from: 'src/x/a.ts', to: 'src/z/f.ts', typeOnly: false },
    ]);
    assert.ok(files.length > 300, `${files.length} files read`);
    assert.ok(edges.length > 1000, `${edges.length} imports read`);
  });

  it('places every source file on a floor', () => {
    assert.deepEqual(
      files.filter((f) => !placeOf(f)),
      [],
    );
  });

  it('runs downhill only: no upward import, none across a floor (type-only ones included)', () => {
    assert.deepEqual(edges.map(layerBreach).filter(Boolean), []);
  });

  it('catches an upward import and one across a floor', () => {
    assert.match(
      layerBreach({ from: 'src/kernel/spawn.ts', to: 'src/plugins/core/ipc.ts', typeOnly: true }) ?? '',
      /upward/,
    );
    assert.match(
      layerBreach({ from: 'src/store/log.ts', to: 'src/runtimes/types.ts', typeOnly: false }) ?? '',
      /across one floor/,
    );
    assert.equal(
      layerBreach({ from: 'src/plugins/core/ipc.ts', to: 'src/kernel/spawn.ts', typeOnly: false }),
      null,
    );
  });

  it('lets a plugin import only core and the plugins it depends on', () => {
    const dependsOn = new Map(builtinPlugins().map((p) => [p.name, p.dependsOn ?? []]));
    assert.deepEqual(edges.map((e) => pluginBreach(e, dependsOn)).filter(Boolean), []);
    assert.match(
      pluginBreach(
        { from: 'src/plugins/turns/x.ts', to: 'src/plugins/orchestration/y.ts', typeOnly: true },
        dependsOn,
      ) ?? '',
      /does not depend/,
    );
  });

  it('has no import cycle across folders, and none of run-time imports at all', () => {
    // Two classes of one folder may name each other's types (a connection and the agents on
    // it); erased at run time, such a pair never decides load order.
    const all = cycles(files, edges);
    assert.deepEqual(
      all.filter((group) => new Set(group.map(folderOf)).size > 1),
      [],
    );
    assert.deepEqual(
      cycles(
        files,
        edges.filter((e) => !e.typeOnly),
      ),
      [],
    );
  });
});

/** The tables a source text names through Kysely (selectFrom, insertInto, updateTable, deleteFrom, joins). */
export function tablesNamed(text: string): string[] {
  const re =
    /\.(?:selectFrom|insertInto|updateTable|deleteFrom|innerJoin|leftJoin|rightJoin|fullJoin)\(\s*'([a-z_][a-z0-9_]*)(?:\s+as\s+[a-z_]+)?'/g;
  return [...text.matchAll(re)].map((m) => m[1]!);
}

describe('what a plugin reaches', () => {
  const plugins = sourceFiles('src/plugins').filter((f) => !f.startsWith('src/plugins/core/'));
  const text = (f: string) => readFileSync(join(ROOT, f), 'utf8');

  it('names only its own tables (`<plugin>` or `<plugin>_…`) outside its migrations', () => {
    const foreign = plugins
      .filter((f) => !f.endsWith('/migrations.ts'))
      .flatMap((f) => {
        const name = /^src\/plugins\/([^/]+)\//.exec(f)![1]!;
        return tablesNamed(text(f))
          .filter((t) => t !== name && !t.startsWith(`${name}_`))
          .map((t) => `${f} names ${t}`);
      });
    assert.deepEqual(foreign, []);
    assert.deepEqual(tablesNamed("db.selectFrom('sessions').innerJoin('fds as f', …)"), ['sessions', 'fds']);
  });

  it('never reaches the store: its tables come through ctx.tables, the rest through the kernel', () => {
    const reach = /\bkernel\.store\b|\bctx\.store\b|\bstore\.(?:reader|writer|log)\b/;
    assert.deepEqual(
      plugins.filter((f) => reach.test(text(f))),
      [],
    );
    assert.ok(reach.test('this.kernel.store.reader'));
  });
});

describe('what a surface reaches', () => {
  const surfaces = sourceFiles('src/surfaces');
  const text = (f: string) => readFileSync(join(ROOT, f), 'utf8');

  // Keys and browser sessions are read by auth/ alone (authenticate.ts, browser-login.ts):
  // a surface that read them would be a second, drifting authentication path.
  const AUTH_READS = ['src/kernel/operator-keys.ts', 'src/auth/browser-sessions.ts'];
  it('authenticates through auth/ only: it imports no operator-key or browser-session reads', () => {
    const edges = surfaces.flatMap((f) => importsOf(f));
    assert.deepEqual(
      edges.filter((e) => AUTH_READS.includes(e.to)).map((e) => `${e.from} imports ${e.to}`),
      [],
    );
    assert.ok(
      edges.some((e) => e.to === 'src/auth/authenticate.ts'),
      'the HTTP surface authenticates',
    );
  });

  it('goes through the door: no store, and no table named (the kernel and the syscalls read them)', () => {
    const reach = /\bwarren\.store\b|\bstore\.(?:reader|writer|log)\b/;
    const sideDoors = surfaces.flatMap((f) => [
      ...(reach.test(text(f)) ? [`${f} reaches the store`] : []),
      ...tablesNamed(text(f)).map((t) => `${f} names table ${t}`),
    ]);
    assert.deepEqual(sideDoors, []);
    assert.ok(reach.test('await warren.store.reader.selectFrom'));
  });
});
