/**
 * Firing with an injected clock, on SQLite and PostgreSQL: cron (with a time zone), interval
 * and one-shot timings, pause and resume, run-now and access, and the typed errors of bad
 * input (the policies: policies.test.ts).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { manualClock } from '../helpers/clock.ts';
import { asSession, call, forEachWarren, idleScript } from '../helpers/warrens.ts';
import { fails } from '../orchestration/helpers.ts';
import { create, firedEvents, firesOf, room, show, tick } from './helpers.ts';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const MIN = 60_000;

forEachWarren('scheduling: firing', (target) => {
  const open = async (graceMs = 60_000) => {
    const clock = manualClock(T0);
    const w = await target.open({ clock, plugins: { config: { scheduling: { graceMs } } } });
    await room(w);
    return { w, clock };
  };
  const note = { stream: { stream: 'ops', message: 'tick' } };

  it('an interval fires once per period, logged with its advance; the message reaches the stream', async () => {
    const { w, clock } = await open();
    const s = await create(w, { name: 'every-minute', intervalMs: MIN, ...note });
    assert.equal(s.nextFireAt, T0 + MIN);
    await tick(w);
    assert.equal((await firesOf(w, s.id)).length, 0, 'nothing before its time');
    clock.set(T0 + MIN + 5);
    await tick(w);
    await tick(w);
    const fires = await firesOf(w, s.id);
    assert.equal(fires.length, 1, 'a second pass fires nothing again');
    assert.equal(fires[0].dueAt, T0 + MIN);
    assert.equal(fires[0].status, 'ok');
    const after = (await show(w, s.id)).schedule;
    assert.equal(after.nextFireAt, T0 + 2 * MIN);
    assert.equal(after.lastOutcome, 'ok');
    assert.equal(after.fires, 1);
    const [ev] = await firedEvents(w, s.id);
    assert.equal(ev!.payload.dueAt, T0 + MIN);
    assert.equal(ev!.payload.lateMs, 5);
    const transcript = await call(w, 'streams_transcript', { stream: 'ops' });
    assert.ok(transcript.messages.some((m: { text: string }) => m.text === 'tick'));
  });

  it('cron fires at its times in its time zone (5 and 6 fields)', async () => {
    const { w, clock } = await open();
    // 02:00 in Paris is 01:00 UTC in January.
    const paris = await create(w, { name: 'nightly', cron: '0 2 * * *', tz: 'Europe/Paris', ...note });
    assert.equal(paris.nextFireAt, Date.parse('2030-01-01T01:00:00Z'));
    const secs = await create(w, { name: 'every-30s', cron: '*/30 * * * * *', ...note });
    assert.equal(secs.nextFireAt, T0 + 30_000);
    clock.set(Date.parse('2030-01-01T01:00:00.010Z'));
    await tick(w);
    const fires = await firesOf(w, paris.id);
    assert.deepEqual(
      fires.map((f: { dueAt: number }) => f.dueAt),
      [Date.parse('2030-01-01T01:00:00Z')],
    );
    assert.equal((await show(w, paris.id)).schedule.nextFireAt, Date.parse('2030-01-02T01:00:00Z'));
    // The 6-field one missed 119 times during this "downtime": skip fires the current only.
    assert.equal((await firesOf(w, secs.id)).length, 1);
  });

  it('a one-shot fires once and then has no next time; one in the past needs nowIfPast', async () => {
    const { w, clock } = await open();
    const once = await create(w, { at: new Date(T0 + 5000).toISOString(), ...note });
    clock.set(T0 + 5000);
    await tick(w);
    clock.set(T0 + 50_000);
    await tick(w);
    assert.equal((await firesOf(w, once.id)).length, 1);
    assert.equal((await show(w, once.id)).schedule.nextFireAt, null);
    await fails(create(w, { at: T0, ...note }), 'invalid_input', /^at: .*in the past.*nowIfPast/);
    const late = await create(w, { at: T0, nowIfPast: true, ...note });
    assert.equal(late.nextFireAt, T0 + 50_000);
    await tick(w);
    assert.equal((await firesOf(w, late.id)).length, 1);
  });

  it('bad input is a typed error naming the field', async () => {
    const { w } = await open();
    const e1 = await fails(create(w, { cron: '61 * * * *', ...note }), 'invalid_input', /^cron: /);
    assert.equal((e1 as unknown as { details: { field: string } }).details.field, 'cron');
    await fails(create(w, { cron: '* * * *', ...note }), 'invalid_input', /^cron: .*4 fields/);
    await fails(create(w, { cron: '* * * * * * *', ...note }), 'invalid_input', /^cron: .*7 fields/);
    const e2 = await fails(
      create(w, { cron: '0 2 * * *', tz: 'Mars/Base', ...note }),
      'invalid_input',
      /^tz: /,
    );
    assert.equal((e2 as unknown as { details: { field: string } }).details.field, 'tz');
    await fails(create(w, { ...note }), 'invalid_input', /one of cron, intervalMs or at/);
    await fails(
      create(w, { intervalMs: MIN, cron: '* * * * *', ...note }),
      'invalid_input',
      /not cron and intervalMs/,
    );
    await fails(create(w, { intervalMs: MIN }), 'invalid_input', /one action/);
    await fails(
      create(w, { intervalMs: MIN, stream: { stream: 'nope', message: 'x' } }),
      'invalid_input',
      /^stream: /,
    );
    await fails(create(w, { at: 'tomorrow-ish', ...note }), 'invalid_input', /^at: /);
  });

  it('run-now fires outside the timing; a session sees and manages only its own schedules', async () => {
    const { w } = await open();
    const s = await create(w, { intervalMs: MIN, ...note });
    const r = await call(w, 'schedule_run_now', { id: s.id });
    assert.equal(r.fire.manual, true);
    await tick(w);
    assert.equal((await firesOf(w, s.id))[0].status, 'ok');
    assert.equal((await show(w, s.id)).schedule.nextFireAt, T0 + MIN, 'its timing is left alone');
    // Another session that holds the schedule tools: none of them reaches a schedule it did not make.
    const other = (await call(w, 'ipc_spawn', { script: idleScript, toolGroups: ['schedules'] })).session.id;
    const agent = asSession(other, 1);
    await fails(call(w, 'schedule_show', { id: s.id }, agent), 'not_found');
    assert.equal((await call(w, 'schedule_list', {}, agent)).schedules.length, 0);
    await call(w, 'cancel_task', { id: s.id });
    await fails(call(w, 'get_task', { id: s.id }), 'not_found');
  });
});
