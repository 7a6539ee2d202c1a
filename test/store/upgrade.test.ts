/**
 * Existing databases upgrade: a SQLite file and a PostgreSQL schema written by commit 5b21520
 * with every plugin enabled (test/fixtures/upgrade, made by generate.ts there) are opened by
 * the current code, whose migrations run on open, and everything the old code wrote reads
 * back through syscalls as expected.json says the old code's syscalls answered.
 *
 * The warren opens with a clock that starts just after the fixture was written: retention,
 * TTLs, leases and schedules see the data as fresh, not as months old, whenever this runs.
 * Sessions are not resumed (deferResume) and the PostgreSQL warren does not join a cluster
 * (a cluster would declare the fixture's node lost and take over, and so resume, its
 * sessions): the test reads what was stored, it runs nothing.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import type { DialectKind, StoreLocation } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { builtinPlugins } from '../../src/syscalls/plugins.ts';
import { Warren } from '../../src/syscalls/warren.ts';
import { type Clock, systemClock } from '../../src/util/clock.ts';
import { createIds } from '../../src/util/ids.ts';
import type { Expected, ExpectedDb } from '../fixtures/upgrade/generate.ts';
import { forEachStore, PG_URL } from '../helpers/stores.ts';
import { call, testKernel } from '../helpers/warrens.ts';
import { schemaOf } from './schema-of.ts';

// biome-ignore lint/suspicious/noExplicitAny: syscall outputs are checked by their own schemas
type Any = any;

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'upgrade');
const expected = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as Expected;
const COMMIT = expected.commit;

/** Time as if it went on from `at`: a second after it now, flowing at the real rate. */
function clockFrom(at: number): Clock {
  const shift = Date.now() - (at + 1000);
  return { ...systemClock, now: () => Date.now() - shift };
}

/** Put the old database at `location`: the SQLite file copied, the dump loaded into its schema. */
async function restore(kind: DialectKind, location: StoreLocation, old: ExpectedDb): Promise<void> {
  if (kind === 'sqlite') {
    copyFileSync(join(FIXTURES, `${COMMIT}.sqlite`), location.url);
    return;
  }
  // The dump names its schema everywhere (it sets an empty search_path): rename it throughout.
  const dump = readFileSync(join(FIXTURES, `${COMMIT}.pg.sql`), 'utf8').replaceAll(
    old.schema!,
    location.schema!,
  );
  const client = new pg.Client({ connectionString: PG_URL });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(dump);
  } finally {
    await client.end();
  }
}

/** Every table in the store's database (its schema, on PostgreSQL), SQLite's own left out. */
async function tablesOf(store: Store): Promise<string[]> {
  const rows =
    store.kind === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master
          where type = 'table' and name not like 'sqlite\\_%' escape '\\'`.execute(store.reader)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema()`.execute(store.reader);
  return rows.rows.map((r) => r.name).sort();
}

const ids = (xs: { id: string }[]) => xs.map((x) => x.id).sort();

forEachStore(`a database written by ${COMMIT} upgrades`, (target) => {
  const old = expected[target.kind];
  const scratch = mkdtempSync(join(tmpdir(), 'warren-upgrade-'));
  let w: Warren;
  const c = (name: string, input: Record<string, unknown> = {}): Promise<Any> => call(w, name, input);

  before(async () => {
    const location = target.location();
    await restore(target.kind, location, old);
    w = await Warren.open({
      db: location.url,
      ...(location.schema ? { schema: location.schema } : {}),
      clock: clockFrom(old.generatedAt),
      kernel: testKernel,
      deferResume: true,
      cluster: { mode: 'off' },
      metrics: false,
      plugins: { config: { groups: { dataDir: join(scratch, 'groups') } } },
    });
  });
  after(async () => {
    try {
      await w?.close();
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('opens with every plugin enabled and loaded', async () => {
    const { plugins } = await c('plugin_list');
    assert.deepEqual(
      plugins
        .filter((p: Any) => p.enabled)
        .map((p: Any) => p.name)
        .sort(),
      old.plugins,
    );
    assert.deepEqual(
      plugins
        .filter((p: Any) => p.loaded)
        .map((p: Any) => p.name)
        .sort(),
      old.plugins,
    );
  });

  it('kernel: sessions, their output, a room and its messages, personas, a secret, zone limits, a key', async () => {
    const { sessions } = await c('ps', { all: true, limit: 500 });
    assert.deepEqual(
      sessions.map((s: Any) => ({
        id: s.id,
        title: s.title,
        parentId: s.parentId,
        status: s.status,
        runtime: s.runtime,
      })),
      old.sessions,
    );
    const { events } = await c('session_events', { id: old.output.session, limit: 1000 });
    assert.equal(events.find((e: Any) => e.type === 'session.output')?.payload.text, old.output.text);
    const transcript = await c('streams_transcript', { stream: old.room.name, limit: 100 });
    assert.equal(transcript.stream.id, old.room.id);
    assert.deepEqual(transcript.messages.map((m: Any) => m.text).reverse(), old.room.messages);
    const { personas } = await c('persona_list');
    assert.deepEqual(
      personas.map((p: Any) => ({
        name: p.name,
        runtime: p.runtime,
        systemPrompt: p.systemPrompt ?? null,
        tools: p.tools ?? null,
      })),
      old.personas,
    );
    assert.deepEqual(
      (await c('secrets_list')).secrets.map((s: Any) => s.name),
      old.secrets,
    );
    assert.deepEqual((await c('zones_limits')).limits, old.limits);
    const { keys } = await c('key_list');
    for (const k of old.keys) {
      assert.deepEqual(
        keys.filter((x: Any) => x.id === k.id).map((x: Any) => ({ id: x.id, name: x.name })),
        [k],
      );
    }
  });

  it('orchestration: tasks with a dependency, escalations (one answered), a durable room attachment', async () => {
    const { tasks } = await c('task_list', { limit: 500 });
    assert.deepEqual(
      tasks.map((t: Any) => ({ id: t.id, title: t.title, parentId: t.parentId, dependsOn: t.dependsOn })),
      old.tasks,
    );
    for (const t of old.tasks) {
      const shown = await c('task_show', { id: t.id });
      assert.equal(shown.task.title, t.title);
      assert.deepEqual(shown.dependsOn, t.dependsOn);
    }
    const { escalations } = await c('inbox_list', { all: true });
    assert.deepEqual(
      escalations.map((e: Any) => ({ id: e.id, task: e.task, question: e.question, status: e.status })),
      old.escalations,
    );
    for (const e of old.escalations) {
      assert.equal((await c('inbox_show', { id: e.id })).escalation.question, e.question);
    }
    for (const a of old.attachments) {
      const { durable } = await c('streams_attachments', { session: a.task });
      assert.deepEqual(
        durable.map((d: Any) => d.streamName),
        [a.stream],
      );
    }
  });

  it('knowledge: findings with tags, found by words and by tag; a workpad at its version', async () => {
    const { findings } = await c('knowledge_search', { limit: 50 });
    assert.deepEqual(
      findings.map((f: Any) => ({ id: f.id, title: f.title, tags: f.tags, task: f.task })),
      old.findings,
    );
    for (const f of old.findings) {
      // The full-text index came along: each finding is found by its own title's words.
      const hits = (await c('knowledge_search', { query: f.title })).findings;
      assert.ok(
        hits.some((h: Any) => h.id === f.id),
        `"${f.title}" finds ${f.id}: ${JSON.stringify(hits)}`,
      );
      for (const tag of f.tags) {
        const tagged = (await c('knowledge_search', { tags: [tag] })).findings;
        assert.ok(
          tagged.some((h: Any) => h.id === f.id),
          `tag ${tag} finds ${f.id}`,
        );
      }
      assert.equal((await c('knowledge_show', { id: f.id })).finding.title, f.title);
    }
    const { workpad } = await c('workpad_read', { task: old.workpad.task });
    assert.deepEqual({ task: workpad.task, body: workpad.body, version: workpad.version }, old.workpad);
  });

  it('scheduling: schedules (one paused) and a fire', async () => {
    const { schedules } = await c('schedule_list');
    assert.deepEqual(
      schedules.map((s: Any) => ({ id: s.id, name: s.name, kind: s.kind, enabled: s.enabled })),
      old.schedules,
    );
    const { fires } = await c('schedule_show', { id: old.fires.schedule });
    assert.deepEqual(
      fires.map((f: Any) => f.id),
      old.fires.ids,
    );
  });

  it('groups: groups, routes, an unrouted message', async () => {
    const { groups } = await c('get_groups');
    assert.deepEqual(
      groups.map((g: Any) => ({ folder: g.folder, name: g.name ?? null })),
      old.groups,
    );
    const { routes } = await c('list_routes');
    assert.deepEqual(
      routes.map((r: Any) => ({ id: r.id, seq: r.seq, match: r.match, target: r.target })),
      old.routes,
    );
    const { messages } = await c('groups_unrouted');
    assert.deepEqual(
      messages.map((m: Any) => ({ id: m.id, text: m.text })),
      old.unrouted,
    );
  });

  it('runners: a runner allowed, one revoked', async () => {
    const { runners } = await c('runner_list');
    assert.deepEqual(
      runners.map((r: Any) => ({ name: r.name, revoked: r.revokedAt !== null })),
      old.runners,
    );
  });

  it('coordinator: agents, a service, an invocation, a delegation, the outbox', async () => {
    const zoneId = 'default';
    const { agents } = await c('agent_list', { zoneId });
    assert.deepEqual(
      agents.map((a: Any) => ({ id: a.id, application_id: a.application_id, parent_id: a.parent_id })),
      old.agents,
    );
    for (const s of old.services) {
      const { services } = await c('service_list', { zoneId, agentId: s.agent_id });
      assert.deepEqual(
        services.map((x: Any) => ({ id: x.id, agent_id: x.agent_id, endpoint_url: x.endpoint_url })),
        [s],
      );
    }
    const { invocations } = await c('invocation_list', { zoneId });
    const view = (i: Any) => ({
      id: i.id,
      service_id: i.service_id,
      method: i.method,
      idempotency_key: i.idempotency_key,
    });
    assert.deepEqual(invocations.map(view), old.invocations);
    for (const i of old.invocations) {
      assert.deepEqual(view((await c('invocation_get', { zoneId, id: i.id })).invocation), i);
    }
    const { delegations } = await c('delegation_list', { zoneId });
    assert.deepEqual(
      delegations.map((d: Any) => ({
        id: d.id,
        source_agent_id: d.source_agent_id,
        target_agent_id: d.target_agent_id,
      })),
      old.delegations,
    );
    assert.equal((await c('outbox_list', { zoneId, limit: 1000 })).events.length, old.outbox);
  });

  it('turns: an adopted session, its turn, a question, a report', async () => {
    const { sessions } = await c('bridge_list_sessions');
    assert.deepEqual(
      sessions.map((s: Any) => s.session_id),
      [old.bridge.session],
    );
    for (const t of old.bridge.turns) {
      const { turn } = await c('bridge_read_turn', { turn_id: t.id });
      assert.deepEqual({ id: turn.turn_id, status: turn.status, prompt: turn.prompt }, t);
    }
    const { questions } = await c('bridge_list_questions', { status: 'all' });
    assert.deepEqual(
      questions.map((q: Any) => ({ id: q.question_id, text: q.text, status: q.status })),
      old.bridge.questions,
    );
    const status = await c('bridge_coordination_status');
    assert.deepEqual(
      status.reports.map((r: Any) => ({ id: r.report_id, summary: r.summary, status: r.status })),
      old.bridge.reports,
    );
    assert.deepEqual(ids(status.turns.map((t: Any) => ({ id: t.turn_id }))), ids(old.bridge.turns));
  });

  // Fails until every plugin's tables carry its name: the renames land with each plugin's
  // own migration, and this is where an upgraded database shows whether they all did.
  it("every table other than the kernel's belongs to a plugin by name", async () => {
    // The kernel's tables: what the kernel's migrations alone make of an empty database.
    const kernel = new Set(await tablesOf(await target.open()));
    const plugins = w.plugins.loaded.filter((p) => !p.required).map((p) => p.name);
    const belongs = (table: string) =>
      plugins.some(
        (p) =>
          table === p ||
          table.startsWith(`${p}_`) ||
          table === `plugin_migrations_${p}` ||
          table === `plugin_migrations_${p}_lock`,
      );
    const strays = (await tablesOf(w.store)).filter((t) => !kernel.has(t) && !belongs(t));
    assert.deepEqual(strays, [], `tables named for no plugin (${plugins.join(', ')}): ${strays.join(', ')}`);
  });

  // A fresh database gets the plugins' tables under their current names from their first
  // migrations and skips the renames; one written before the renames gets there by them. The
  // two must not drift apart: same tables, columns, keys, indexes and triggers.
  it('ends with the schema a fresh database gets', async () => {
    const location = target.location();
    const fresh = await Store.open(location, systemClock, createIds(systemClock));
    try {
      // What a fresh open runs: the kernel's migrations (in Store.open), then every plugin's.
      for (const p of builtinPlugins())
        if (p.migrations) await fresh.migratePlugin(p.name, p.migrations(fresh.kind));
      const upgraded = await schemaOf(w.store);
      const made = await schemaOf(fresh);
      assert.ok(made.length > 100, `${made.length} schema lines read`);
      assert.deepEqual(
        upgraded.filter((l) => !made.includes(l)),
        [],
        'in the upgraded database only',
      );
      assert.deepEqual(
        made.filter((l) => !upgraded.includes(l)),
        [],
        'in the fresh database only',
      );
    } finally {
      await fresh.close();
    }
  });
});
