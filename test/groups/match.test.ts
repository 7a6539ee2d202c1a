/** The route match language: parsing, validation (typed errors) and first-match order. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { byOrder, firstMatch, formatMatch, matches, parseMatch } from '../../src/plugins/groups/match.ts';
import { checkFolder } from '../../src/plugins/groups/names.ts';
import { RouteIndex } from '../../src/plugins/groups/route-index.ts';
import { refusal, toolsOf } from '../../src/plugins/groups/tiers.ts';
import { globSteps } from '../../src/util/glob.ts';
import { SliceGate } from '../../src/util/slice-gate.ts';
import { WarrenError } from '../../src/vocab/errors.ts';
import { turnsDuring } from '../helpers/loop-turns.ts';

const invalidInput = (fn: () => unknown, re: RegExp) =>
  assert.throws(
    fn,
    (e: unknown) => e instanceof WarrenError && e.code === 'invalid_input' && re.test(e.message),
  );

describe('groups: match expressions', () => {
  it('parses key=glob pairs, canonicalises their order, and matches all of them', () => {
    const m = parseMatch('verb=mention  platform=telegram');
    assert.equal(formatMatch(m), 'platform=telegram verb=mention');
    assert.equal(matches(m, { platform: 'telegram', verb: 'mention', room: 'x' }), true);
    assert.equal(matches(m, { platform: 'telegram', verb: 'message' }), false);
    assert.equal(matches(parseMatch('room=-5075870332'), { room: '-5075870332' }), true);
    assert.equal(matches(parseMatch('sender=*bot'), { sender: 'newsbot' }), true);
    assert.equal(matches(parseMatch('sender=*bot'), { sender: 'bottle' }), false);
    assert.equal(matches(parseMatch('chat_jid=*'), {}), true, 'a missing field is the empty string');
    assert.equal(matches(parseMatch(''), { platform: 'x' }), true, 'an empty expression matches all');
    assert.equal(
      matches(parseMatch('room=a=b'), { room: 'a=b' }),
      true,
      'the glob is everything after the first =',
    );
  });

  it('refuses unknown keys, repeated keys, empty or oversized globs and control characters', () => {
    invalidInput(() => parseMatch('channel=x'), /unknown key "channel"/);
    invalidInput(() => parseMatch('room'), /is not key=glob/);
    invalidInput(() => parseMatch('=x'), /is not key=glob/);
    invalidInput(() => parseMatch('room=a room=b'), /room given twice/);
    invalidInput(() => parseMatch('room='), /empty glob/);
    invalidInput(() => parseMatch(`room=${'*'.repeat(300)}`), /over 256 characters/);
    invalidInput(() => parseMatch('room=a\tb'), /control character/);
    invalidInput(() => parseMatch('x'.repeat(2000)), /at most 1024/);
  });

  it('a pathological glob against a long text stays linear (the project matcher)', {
    timeout: 30_000,
  }, () => {
    const glob = `${'*a'.repeat(100)}b`;
    const m = parseMatch(`sender=${glob}`);
    const text = 'a'.repeat(5000);
    assert.equal(matches(m, { sender: text }), false);
    // Linear: the route's glob is the project matcher's, which looks at each character a
    // bounded number of times (counted, not timed).
    const steps = globSteps(glob, text);
    assert.ok(steps <= 2 * text.length + glob.length, `${steps} characters looked at`);
  });

  it('the first route by seq (then id) wins', () => {
    const routes = [
      { id: 'r3', seq: 5, target: 'c', match: parseMatch('platform=telegram') },
      { id: 'r1', seq: 10, target: 'a', match: parseMatch('') },
      { id: 'r2', seq: 5, target: 'b', match: parseMatch('platform=tele*') },
    ].sort(byOrder);
    assert.deepEqual(
      routes.map((r) => r.id),
      ['r2', 'r3', 'r1'],
    );
    assert.equal(firstMatch(routes, { platform: 'telegram' })?.target, 'b');
    assert.equal(firstMatch(routes, { platform: 'whatsapp' })?.target, 'a');
    assert.equal(firstMatch(routes.slice(0, 2), { platform: 'whatsapp' }), null);
  });
});

describe('groups: folders and tiers', () => {
  it('refuses folders that could escape the ipc dir', () => {
    for (const bad of [
      '..',
      '../x',
      'main/..',
      '/main',
      'main/',
      'main//a',
      '.',
      'Main',
      'a b',
      'main/.hidden',
      'x\u0000',
      `a${'/a'.repeat(8)}`,
    ]) {
      invalidInput(() => checkFolder(bad), /group folder|at most/);
    }
    assert.equal(checkFolder('main/research-1/scraper_2'), 'main/research-1/scraper_2');
  });

  it('seed 002’s tiers: root all, world management + send, agent send, worker send_reply; deny wins', () => {
    assert.equal(toolsOf(0, []).length, 20);
    assert.equal(toolsOf(1, []).includes('spawn_group'), false);
    assert.deepEqual(toolsOf(2, []).sort(), [
      'delegate_to_parent',
      'send_document',
      'send_message',
      'send_reply',
    ]);
    assert.deepEqual(toolsOf(3, []), ['send_reply']);
    assert.deepEqual(toolsOf(7, []), ['send_reply']);
    assert.deepEqual(toolsOf(0, ['allow:send_*', 'deny:send_reply']).sort(), [
      'send_document',
      'send_message',
    ]);
    assert.match(refusal(2, [], 'add_route') ?? '', /needs tier 1 or lower; this group is tier 2 \(agent\)/);
    assert.match(refusal(0, ['deny:*'], 'add_route') ?? '', /deny:\*/);
  });
});

describe('groups: the route index', () => {
  it('finds routes filed under a glob head, whatever the head length, in seq order with the rest', () => {
    const routes = [
      { id: 'r1', seq: 1, target: 'a', match: parseMatch('room=-100*') },
      { id: 'r2', seq: 2, target: 'b', match: parseMatch('room=-1001*') },
      { id: 'r3', seq: 3, target: 'c', match: parseMatch('sender=*bot') },
      { id: 'r4', seq: 4, target: 'd', match: parseMatch('room=-2 sender=al*') },
      { id: 'r5', seq: 5, target: 'e', match: parseMatch('platform=tele* room=*') },
    ].sort(byOrder);
    const index = new RouteIndex(routes);
    const first = (msg: Record<string, string>) => index.first(msg)?.id ?? null;
    assert.equal(first({ room: '-100' }), 'r1', 'a head as long as the value');
    assert.equal(first({ room: '-1001' }), 'r1');
    assert.equal(first({ room: '-1' }), null);
    assert.equal(first({ room: '-5', sender: 'newsbot' }), 'r3');
    assert.equal(first({ room: '-2', sender: 'alice' }), 'r4');
    assert.equal(first({ room: '-2', sender: 'bob' }), null);
    assert.equal(first({ platform: 'tele', room: '' }), 'r5');
    assert.equal(first({ platform: 'telegram', room: '-1001', sender: 'newsbot' }), 'r1');
    const msgs: Array<Record<string, string>> = [
      { room: '-100' },
      { room: '-2', sender: 'alice' },
      { platform: 'telegram' },
      {},
    ];
    for (const msg of msgs)
      assert.equal(first(msg), firstMatch(routes, msg)?.id ?? null, JSON.stringify(msg));
  });

  it('matching many routes lets the event loop turn (firstYielding), with the same answer as first', async () => {
    const hard = `*${'a'.repeat(150)}b`;
    const field = `${'a'.repeat(299)}b`;
    const routes = Array.from({ length: 3000 }, (_, i) => ({
      id: `r${String(i).padStart(4, '0')}`,
      seq: i,
      target: 'g',
      match: parseMatch(`room=${hard} sender=${i === 2999 ? hard : hard.replace(/b$/, 'c')}`),
    })).sort(byOrder);
    const index = new RouteIndex(routes);
    const msg = { room: field, sender: field };
    const [found, matching] = await turnsDuring(() => index.firstYielding(msg, new SliceGate(0)));
    const [built, building] = await turnsDuring(() => RouteIndex.build(routes, 0));
    assert.equal(found?.id, 'r2999');
    assert.equal(index.first(msg)?.id, 'r2999');
    assert.equal(built.first(msg)?.id, 'r2999', 'an index built in slices answers the same');
    assert.ok(matching > 10, `the loop turned ${matching} times while 3,000 routes were matched`);
    assert.ok(building > 10, `the loop turned ${building} times while 3,000 routes were indexed`);
    assert.equal(await index.firstYielding({ room: 'x' }, new SliceGate(0)), null);

    // Many messages at once share the gate: with a slice of 0 the loop runs one piece (32
    // routes) a turn for all of them together, not one per message. Each walks all 3,000.
    const gate = new SliceGate(0);
    const [answers, together] = await turnsDuring(() =>
      Promise.all(Array.from({ length: 4 }, () => index.firstYielding(msg, gate))),
    );
    assert.deepEqual(
      answers.map((r) => r?.id),
      ['r2999', 'r2999', 'r2999', 'r2999'],
    );
    const pieces = Math.ceil(3000 / 32);
    assert.ok(together >= 4 * pieces, `${together} loop turns for 4 × ${pieces} pieces`);
  });

  it('gives the same first match as walking every route, for random routes and messages', async () => {
    const values = {
      platform: ['telegram', 'slack', 'teams'],
      room: ['1', '2', '3', '-1001', '-1002', '-10'],
      chat_jid: ['a', 'b'],
      sender: ['x', 'y'],
      verb: ['message', 'mention'],
    };
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const keys = Object.keys(values) as Array<keyof typeof values>;
    // Literals, and globs of every shape: a head of any length (filed under it), a tail only, both, a bare star.
    const globOf = (v: string) => {
      const cut = rnd(v.length + 1);
      switch (rnd(5)) {
        case 0:
          return `${v.slice(0, cut)}*`;
        case 1:
          return `*${v.slice(cut)}`;
        case 2:
          return `${v.slice(0, cut)}*${v.slice(cut + 1)}`;
        case 3:
          return '*';
        default:
          return `${v.slice(0, cut)}*${v.slice(cut)}x`;
      }
    };
    // Many small sets, every route with at least one pair, so the first match is often a glob's.
    for (let set = 0; set < 40; set++) {
      const routes = Array.from({ length: 40 }, (_, i) => {
        const chosen = keys.filter(() => rnd(3) === 0);
        const pairs = (chosen.length > 0 ? chosen : [keys[rnd(keys.length)]!]).map((k) => {
          const v = values[k][rnd(values[k].length)]!;
          return `${k}=${rnd(2) === 0 ? globOf(v) : v}`;
        });
        return { id: `r${i}`, seq: rnd(50), target: `g${i}`, match: parseMatch(pairs.join(' ')) };
      }).sort(byOrder);
      const index = new RouteIndex(routes);
      for (let i = 0; i < 200; i++) {
        // Some fields missing: they read as the empty string.
        const msg = Object.fromEntries(
          keys.filter(() => rnd(8) !== 0).map((k) => [k, values[k][rnd(values[k].length)]!]),
        );
        assert.equal(index.first(msg)?.id, firstMatch(routes, msg)?.id, JSON.stringify(msg));
        if (i % 20 === 0)
          assert.equal((await index.firstYielding(msg, new SliceGate(0)))?.id, firstMatch(routes, msg)?.id);
      }
    }
    assert.equal(new RouteIndex([]).first({ room: '1' }), null);
  });
});
