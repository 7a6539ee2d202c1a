import assert from 'node:assert/strict';
import { realpathSync } from 'node:fs';
import { it } from 'node:test';
import { sql } from 'kysely';
import { personas } from '../../src/store/migrations/009_personas.ts';
import { operator } from '../../src/vocab/principal.ts';
import { startHttp } from '../helpers/http.ts';
import {
  asSession,
  call,
  eventsOf,
  forEachWarren,
  idleScript,
  outputs,
  sessionOf,
  until,
  waitStatus,
} from '../helpers/warrens.ts';

/** A script that says its system prompt, then idles. */
const sayPrompt = { steps: [{ say: 'system: ${self.systemPrompt}' }, { listen: {} }] };

const reviewer = {
  name: 'reviewer',
  runtime: 'script',
  model: 'model-r',
  systemPrompt: 'You review diffs.',
  tools: ['ipc_read', 'ipc_write'],
  maxTurns: 7,
  budget: { turns: 50 },
  env: { REVIEW_MODE: 'strict' },
  config: { script: sayPrompt },
};

type Rejection = Error & { code: string; details?: Record<string, unknown> };

forEachWarren('personas', (t) => {
  it('create, list, show, replace and delete, each logged', async () => {
    const w = await t.open();
    const created = await call(w, 'persona_create', reviewer);
    assert.equal(created.created, true);
    assert.equal(created.persona.name, 'reviewer');
    assert.deepEqual(created.persona.tools, ['ipc_read', 'ipc_write']);
    await assert.rejects(call(w, 'persona_create', reviewer), { code: 'name_taken' });
    // --tools takes a comma-separated list too (the CLI's form).
    await call(w, 'persona_create', { name: 'writer', runtime: 'script', tools: 'ipc_write, ipc_read' });
    const { personas } = await call(w, 'persona_list');
    assert.deepEqual(
      personas.map((p: { name: string }) => p.name),
      ['reviewer', 'writer'],
    );
    assert.deepEqual(personas[1].tools, ['ipc_write', 'ipc_read']);

    const replaced = await call(w, 'persona_create', { ...reviewer, model: 'model-s', replace: true });
    assert.equal(replaced.created, false);
    const shown = (await call(w, 'persona_show', { name: 'reviewer' })).persona;
    assert.equal(shown.model, 'model-s');
    assert.equal(shown.systemPrompt, 'You review diffs.');
    assert.deepEqual(shown.budget, { turns: 50 });
    assert.equal(shown.createdAt, created.persona.createdAt);

    assert.deepEqual(await call(w, 'persona_delete', { name: 'writer' }), { name: 'writer', deleted: true });
    await assert.rejects(call(w, 'persona_delete', { name: 'writer' }), { code: 'not_found' });
    await assert.rejects(call(w, 'persona_show', { name: 'writer' }), { code: 'not_found' });
    const types = (await call(w, 'events', { limit: 1000 })).events
      .reverse()
      .filter((e: { type: string }) => e.type.startsWith('persona.'))
      .map((e: { type: string; payload: { name: string } }) => `${e.type} ${e.payload.name}`);
    assert.deepEqual(types, [
      'persona.created reviewer',
      'persona.created writer',
      'persona.replaced reviewer',
      'persona.deleted writer',
    ]);
  });

  it('refuses bad personas: names, runtimes, credentials inline, relative paths, oversized prompts', async () => {
    const w = await t.open();
    for (const name of ['', 'has space', 'a/b', 'x'.repeat(129), '../up']) {
      await assert.rejects(
        call(w, 'persona_create', { name, runtime: 'script' }),
        { code: 'invalid_input' },
        name,
      );
    }
    await assert.rejects(call(w, 'persona_create', { name: 'p', runtime: 'nope' }), {
      code: 'runtime_unavailable',
    });
    await assert.rejects(
      call(w, 'persona_create', { name: 'p', runtime: 'script', env: { ANTHROPIC_API_KEY: 'sk-1' } }),
      (e: Rejection) =>
        e.code === 'invalid_input' && /secretEnv/.test(e.message) && !e.message.includes('sk-1'),
    );
    await assert.rejects(call(w, 'persona_create', { name: 'p', runtime: 'script', cwd: 'rel/dir' }), {
      code: 'invalid_input',
    });
    await assert.rejects(
      call(w, 'persona_create', { name: 'p', runtime: 'script', grants: { executables: ['python3'] } }),
      { code: 'invalid_input' },
    );
    await assert.rejects(
      call(w, 'persona_create', { name: 'p', runtime: 'script', systemPrompt: 'x'.repeat(300 * 1024) }),
      { code: 'invalid_input' },
    );
    await assert.rejects(call(w, 'persona_create', { name: 'p', runtime: 'script', budget: { turns: -1 } }), {
      code: 'invalid_input',
    });
    assert.deepEqual((await call(w, 'persona_list')).personas, []);
  });

  it('a spawn with a persona gets its runtime, model, prompt, tools and limits; the log says which', async () => {
    const w = await t.open();
    await call(w, 'persona_create', reviewer);
    const r = await call(w, 'ipc_spawn', { personaId: 'reviewer', prompt: 'review PR 12', title: 'pr-12' });
    const s = r.session;
    assert.equal(s.runtime, 'script');
    assert.equal(s.persona, 'reviewer');
    assert.equal(s.model, 'model-r');
    assert.equal(s.maxTurns, 7);
    assert.ok(s.tools.length > 0);
    assert.ok(
      s.tools.every((tool: string) => ['ipc_read', 'ipc_write'].includes(tool)),
      s.tools.join(),
    );
    // The persona's system prompt reached the runtime.
    await until(
      async () => (await outputs(w, s.id)).includes('system: You review diffs.'),
      5000,
      'the prompt',
    );
    const spawned = (await eventsOf(w, s.id)).find((e) => e.type === 'session.spawned');
    assert.equal(spawned?.payload.persona, 'reviewer');
    assert.equal(spawned?.payload.model, 'model-r');
    assert.equal(spawned?.payload.prompt, 'review PR 12');

    // The request narrows: a lower maxTurns and another model win; a higher maxTurns does not.
    const lower = await call(w, 'ipc_spawn', { personaId: 'reviewer', maxTurns: 3, model: 'model-x' });
    assert.equal(lower.session.maxTurns, 3);
    assert.equal(lower.session.model, 'model-x');
    const higher = await call(w, 'ipc_spawn', { personaId: 'reviewer', maxTurns: 99 });
    assert.equal(higher.session.maxTurns, 7);
    // A tool the persona does not list cannot be added back by the request.
    const tools = await call(w, 'ipc_spawn', { personaId: 'reviewer', tools: ['ipc_write', 'ps'] });
    assert.deepEqual(tools.session.tools, ['ipc_write']);
    // A runtime other than the persona's is a contradiction, not an override.
    await assert.rejects(call(w, 'ipc_spawn', { personaId: 'reviewer', runtime: 'command' }), {
      code: 'invalid_input',
    });
    await assert.rejects(call(w, 'ipc_spawn', { personaId: 'nobody' }), { code: 'not_found' });

    // Deleting the persona leaves its sessions as they were spawned.
    await call(w, 'persona_delete', { name: 'reviewer' });
    // Its turn may still be ending: wait for the quiescent point, then compare.
    const after = await until(async () => {
      const now = await sessionOf(w, s.id);
      return now.status === 'running' || now.status === 'pending' ? undefined : now;
    });
    assert.equal(after.status, 'idle');
    assert.equal(after.persona, 'reviewer');
    assert.equal(after.model, 'model-r');
  });

  it('an agent choosing a persona that holds more than it does is refused with widens_grant', async () => {
    const w = await t.open();
    const parent = await call(w, 'ipc_spawn', {
      script: idleScript,
      tools: ['ipc_spawn', 'ipc_read', 'ipc_write', 'ipc_close', 'persona_list'],
      grants: { runtimes: ['script'], secrets: [] },
    });
    const me = asSession(parent.session.id);
    await call(w, 'persona_create', { name: 'wide', runtime: 'script', tools: ['ipc_read', 'ps'] });
    await call(w, 'persona_create', {
      name: 'cmd',
      runtime: 'command',
      config: { command: [process.execPath, '-e', ''] },
    });
    await call(w, 'secrets_set', { name: 'gh', value: 'ghp_value' });
    await call(w, 'persona_create', { name: 'keyed', runtime: 'script', secretEnv: { GH_TOKEN: 'gh' } });
    const widens = async (persona: string, what: string) => {
      await assert.rejects(
        call(w, 'ipc_spawn', { personaId: persona, script: idleScript }, me),
        (e: Rejection) => {
          assert.equal(e.code, 'widens_grant');
          assert.ok(((e.details?.widens ?? []) as string[]).includes(what), String(e.details?.widens));
          assert.ok(e.message.includes(what), e.message);
          assert.doesNotMatch(e.message, /ghp_value/);
          return true;
        },
      );
    };
    await widens('wide', 'tool ps');
    await widens('cmd', 'runtime command');
    await widens('cmd', `executable ${realpathSync(process.execPath)}`);
    await widens('keyed', 'secret gh');
    // Nothing was spawned under the parent; an operator (who holds everything) may use them.
    const children = (await call(w, 'ps')).sessions.filter(
      (x: { parentId: string }) => x.parentId === parent.session.id,
    );
    assert.equal(children.length, 0);
    const byOperator = await call(w, 'ipc_spawn', { personaId: 'wide', script: idleScript });
    assert.equal(byOperator.session.persona, 'wide');

    // A persona within the parent's grants works; the child's tools are the usual intersection.
    await call(w, 'persona_create', {
      name: 'narrow',
      runtime: 'script',
      tools: ['ipc_read', 'ipc_write', 'ipc_close'],
    });
    const child = await call(
      w,
      'ipc_spawn',
      { personaId: 'narrow', script: idleScript, tools: ['ipc_read', 'ipc_write'] },
      me,
    );
    assert.equal(child.session.parentId, parent.session.id);
    assert.equal(child.session.persona, 'narrow');
    assert.deepEqual([...child.session.tools].sort(), ['ipc_read', 'ipc_write']);
    await waitStatus(w, child.session.id, 'idle');
  });

  it("a script agent's spawn step takes a persona", async () => {
    const w = await t.open();
    await call(w, 'persona_create', {
      name: 'worker',
      runtime: 'script',
      maxTurns: 2,
      config: { script: idleScript },
    });
    const lead = await call(w, 'ipc_spawn', {
      script: { steps: [{ spawn: { as: 'kid', personaId: 'worker', prompt: 'go' } }, { listen: {} }] },
    });
    const kid = await until(
      async () =>
        (await call(w, 'ps')).sessions.find((x: { parentId: string }) => x.parentId === lead.session.id),
      5000,
      'the child',
    );
    assert.equal(kid.persona, 'worker');
    assert.equal(kid.maxTurns, 2);
  });

  it('a persona keeps its sessions inside its cwd roots', async () => {
    const w = await t.open();
    const root = process.cwd();
    await call(w, 'persona_create', {
      name: 'boxed',
      runtime: 'script',
      grants: { cwd: [`${root}/test`] },
      config: { script: idleScript },
    });
    const r = await call(w, 'ipc_spawn', { personaId: 'boxed' });
    assert.equal(r.session.persona, 'boxed');
    await assert.rejects(call(w, 'ipc_spawn', { personaId: 'boxed', cwd: `${root}/src` }), (e: Rejection) => {
      assert.equal(e.code, 'forbidden');
      assert.match(e.message, /persona's roots/);
      return true;
    });
    await call(w, 'ipc_spawn', { personaId: 'boxed', cwd: `${root}/test/kernel` });
  });

  it('personas are per zone, read by orchestrators and kept by operators', async () => {
    const w = await t.open();
    const other = operator('admin', 'other');
    await call(w, 'persona_create', { ...reviewer, name: 'mine' });
    await call(w, 'persona_create', { name: 'theirs', runtime: 'script' }, other);
    assert.deepEqual(
      (await call(w, 'persona_list', {}, other)).personas.map((p: { name: string }) => p.name),
      ['theirs'],
    );
    await assert.rejects(call(w, 'persona_show', { name: 'mine' }, other), { code: 'not_found' });
    await assert.rejects(call(w, 'ipc_spawn', { personaId: 'mine' }, other), { code: 'not_found' });
    await assert.rejects(call(w, 'persona_delete', { name: 'mine' }, other), { code: 'not_found' });
    assert.equal((await call(w, 'persona_show', { name: 'mine' })).persona.name, 'mine');

    // An orchestrator (depth 1) reads them; it cannot make or remove one; an agent (depth 2) cannot read them.
    const orch = await call(w, 'ipc_spawn', { script: idleScript });
    const asOrch = asSession(orch.session.id);
    assert.equal((await call(w, 'persona_list', {}, asOrch)).personas.length, 1);
    await assert.rejects(call(w, 'persona_create', { name: 'x', runtime: 'script' }, asOrch), {
      code: 'forbidden',
    });
    await assert.rejects(call(w, 'persona_delete', { name: 'mine' }, asOrch), { code: 'forbidden' });
    const agent = await call(w, 'ipc_spawn', { script: idleScript }, asOrch);
    // An orchestrator at any depth reads them (trees grow past depth 2 by default).
    assert.ok(await call(w, 'persona_list', {}, asSession(agent.session.id, 2)));
  });

  it('REST: create, list, show, delete; errors keep their codes and statuses', async () => {
    const h = await startHttp(t);
    const made = await h.api('POST', '/v1/personas', { name: 'rest', runtime: 'script', tools: 'ipc_read' });
    assert.equal(made.status, 200, JSON.stringify(made.json));
    assert.deepEqual(made.json.persona.tools, ['ipc_read']);
    assert.equal((await h.api('POST', '/v1/personas', { name: 'rest', runtime: 'script' })).status, 409);
    assert.deepEqual(
      (await h.api('GET', '/v1/personas')).json.personas.map((p: { name: string }) => p.name),
      ['rest'],
    );
    assert.equal((await h.api('GET', '/v1/personas/rest')).json.persona.runtime, 'script');
    // An orchestrator's token reads them, and gets widens_grant (403) for one that holds more.
    const parent = await call(h.warren, 'ipc_spawn', {
      script: idleScript,
      tools: ['ipc_spawn', 'persona_show'],
    });
    const auth = h.tokenOf(parent.session.id);
    assert.equal((await h.api('GET', '/v1/personas/rest', undefined, { auth })).status, 200);
    const refused = await h.api('POST', '/v1/sessions', { personaId: 'rest', script: idleScript }, { auth });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.code, 'widens_grant');
    assert.equal((await h.api('DELETE', '/v1/personas/rest', undefined, { auth })).status, 403);
    assert.equal((await h.api('DELETE', '/v1/personas/rest')).status, 200);
    const gone = await h.api('GET', '/v1/personas/rest');
    assert.equal(gone.status, 404);
    assert.equal(gone.json.error.code, 'not_found');
  });

  it('migration 009 gives sessions from before it the model their spec names', async () => {
    const location = t.location();
    let w = await t.open({ location });
    const old = await call(w, 'ipc_spawn', { script: idleScript, model: 'old-model' });
    // Back to the schema before 009 (its table and columns gone), then 009 run again: later
    // migrations stay as they are, so the Migrator is not asked to run one out of order.
    await w.store.writer.write(async (tx) => {
      await sql`drop table personas`.execute(tx.db);
      await sql`alter table sessions drop column persona`.execute(tx.db);
      await sql`alter table sessions drop column model`.execute(tx.db);
      await personas(t.kind).up(tx.db as never);
    });
    await w.close();
    w = await t.open({ location });
    const s = await sessionOf(w, old.session.id);
    assert.equal(s.model, 'old-model');
    assert.equal(s.persona, null);
    assert.equal((await sessionOf(w, 'init')).model, null);
  });
});
