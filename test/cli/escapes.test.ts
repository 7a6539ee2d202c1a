/**
 * The terminal-escape attack: agent output, titles and names that carry ESC sequences must
 * reach the operator's terminal as visible text (`\x1b[2J`), never raw. The server is a real
 * HTTP server answering what a compromised agent could have put in the log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { renderTable } from '../../src/surfaces/cli/table.ts';
import { visible, visibleJson } from '../../src/surfaces/cli/visible.ts';
import { cli, fakeServer, type Reply } from './helpers.ts';

const ATTACK = 'pwned\u001b[2J\u001b]0;owned\u0007 \u009b31m \u007f bell\u0000';
/** Any C0 except newline, DEL or C1, raw. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly what the test looks for.
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

const session = {
  id: 'ses_1',
  zone: 'default',
  parentId: 'ses_0',
  depth: 1,
  status: 'idle',
  endReason: null,
  runtime: 'script',
  runner: 'local',
  title: `t${ATTACK}`,
  parentClose: 'reparent',
  lastMessage: ATTACK,
  suspendReason: null,
  turns: 1,
  usage: {},
  tools: null,
  createdAt: 0,
  updatedAt: 0,
  endedAt: null,
};
const event = {
  seq: 7,
  id: 'evt_1',
  zone: 'default',
  ts: 0,
  type: 'session.output',
  actor: 'ses_1',
  session_id: 'ses_1',
  stream_id: null,
  payload: { text: ATTACK },
};
const stream = {
  id: 'str_1',
  zone: 'default',
  name: `room${ATTACK}`,
  kind: 'named',
  owner: 'operator:root',
  sessionId: null,
  selfEcho: false,
  createdAt: 0,
  closedAt: null,
};

describe('control characters are shown, never sent raw', () => {
  let server: Awaited<ReturnType<typeof fakeServer>>;
  const replies: Record<string, Reply> = {
    '/v1/sessions': { status: 200, body: { sessions: [session] } },
    '/v1/events': { status: 200, body: { events: [event] } },
    '/v1/sessions/ses_1/events': { status: 200, body: { events: [event] } },
    '/v1/sessions/ses_1': { status: 200, body: { session } },
    '/v1/streams': { status: 200, body: { streams: [{ ...stream, subscribers: [], bufferDepth: 0 }] } },
    '/v1/streams/x/attach': {
      status: 404,
      body: { error: { code: 'not_found', message: `no stream ${ATTACK}` } },
    },
  };
  before(async () => {
    server = await fakeServer((req) => replies[req.path] ?? { status: 404, body: {} });
  });
  after(() => server.close());

  const run = (...argv: string[]) => cli(argv, { env: { WARREN_URL: server.url, WARREN_API_KEY: 'k' } });

  for (const argv of [['ps'], ['session', 'events', 'ses_1'], ['session', 'show', 'ses_1']]) {
    it(`warren ${argv.join(' ')}`, async () => {
      const { code, stdout, stderr } = await run(...argv);
      assert.equal(code, 0, stderr);
      assert.doesNotMatch(stdout, RAW_CONTROL);
      assert.ok(stdout.includes('pwned\\x1b[2J\\x1b]0;owned\\x07'), stdout);
    });
  }

  it('warren events: the payload column is JSON, escaped as JSON', async () => {
    const { code, stdout } = await run('events');
    assert.equal(code, 0);
    assert.doesNotMatch(stdout, RAW_CONTROL);
    assert.ok(stdout.includes('pwned\\u001b[2J\\u001b]0;owned\\u0007'), stdout);
  });

  it('warren streams list: the room name', async () => {
    const { stdout } = await run('streams', 'list');
    assert.doesNotMatch(stdout, RAW_CONTROL);
    assert.ok(stdout.includes('roompwned\\x1b[2J'), stdout);
  });

  it('--json: still the same JSON value, with C1 and DEL escaped too', async () => {
    const { stdout } = await run('ps', '--json');
    assert.doesNotMatch(stdout, RAW_CONTROL);
    const parsed = JSON.parse(stdout) as { sessions: Array<{ lastMessage: string }> };
    assert.equal(parsed.sessions[0]?.lastMessage, ATTACK);
  });

  it('error messages from the server', async () => {
    const { code, stderr } = await run('streams', 'attach', 'ses_1', 'x');
    assert.equal(code, 1);
    assert.doesNotMatch(stderr, RAW_CONTROL);
    assert.match(stderr, /no stream pwned\\x1b\[2J/);
  });
});

describe('the escaping itself', () => {
  it('escapes C0, DEL and C1 as \\xNN; keeps newlines only when asked', () => {
    assert.equal(visible('a\u001bb\u007fc\u0085d\ne'), 'a\\x1bb\\x7fc\\x85d\\x0ae');
    assert.equal(visible('a\u001b\nb', { keepNewlines: true }), 'a\\x1b\nb');
    const plain = 'nothing to see, ünïcödé → fine';
    assert.equal(visible(plain), plain);
  });

  it('keeps table columns aligned around an escaped cell', () => {
    const out = renderTable(['A', 'B'], [['x\u001by', 'z']]);
    assert.equal(out, 'A       B\nx\\x1by  z\n');
  });

  it('JSON with DEL and C1 escaped parses to the same value', () => {
    const value = { s: 'a\u007fb\u009bc\u001b' };
    const json = visibleJson(JSON.stringify(value));
    assert.doesNotMatch(json, RAW_CONTROL);
    assert.deepEqual(JSON.parse(json), value);
  });
});
