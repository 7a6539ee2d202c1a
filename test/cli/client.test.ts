import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { cli, fakeServer, type Recorded, type Reply, tempDir } from './helpers.ts';

describe('client against a real HTTP server', () => {
  let server: Awaited<ReturnType<typeof fakeServer>>;
  let reply: (req: Recorded) => Reply = () => ({ status: 200, body: {} });
  const env = () => ({ WARREN_URL: server.url, WARREN_API_KEY: 'k-env' });
  const last = () => server.requests.at(-1)!;

  before(async () => {
    server = await fakeServer((req) => reply(req));
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
    reply = () => ({ status: 200, body: {} });
  });

  it('GET: remaining input in the query string, with the bearer key', async () => {
    reply = () => ({ status: 200, body: { events: [] } });
    const { code, stdout, stderr } = await cli(
      ['events', '--type', 'session.spawned', '--since', '2026-05-01T00:00:00Z', '--limit', '5'],
      { env: env() },
    );
    assert.equal(stderr, '');
    assert.equal(code, 0);
    assert.equal(stdout, 'no events\n');
    const req = last();
    assert.equal(req.method, 'GET');
    assert.equal(req.path, '/v1/events');
    assert.deepEqual(req.query, { type: 'session.spawned', since: '2026-05-01T00:00:00Z', limit: '5' });
    assert.equal(req.headers.authorization, 'Bearer k-env');
    assert.equal(req.headers['x-warren-zone'], undefined);
    assert.equal(req.body, '');
  });

  it('GET: path params from input fields, booleans as true', async () => {
    reply = () => ({ status: 200, body: { sessions: [] } });
    await cli(['ps', '--all'], { env: env() });
    assert.deepEqual([last().path, last().query], ['/v1/sessions', { all: 'true' }]);
    reply = () => ({ status: 200, body: { events: [] } });
    await cli(['session', 'events', 'ses_1', '--from', '120'], { env: env() });
    assert.deepEqual([last().path, last().query], ['/v1/sessions/ses_1/events', { from: '120' }]);
  });

  it('POST: path params filled and encoded, the rest as a JSON body', async () => {
    reply = () => ({ status: 200, body: { session: 'ses_1', stream: 'str_9', fd: 4, created: true } });
    const { code, stdout } = await cli(
      ['streams', 'attach', 'ses_1', 'team room/1', '--perm', 'r', '--mode', 'detach'],
      {
        env: env(),
      },
    );
    assert.equal(code, 0);
    assert.equal(stdout, 'attached ses_1 to str_9 as fd 4\n');
    const req = last();
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/v1/streams/team%20room%2F1/attach');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(req.body), { session: 'ses_1', permission: 'r', mode: 'detach' });
  });

  it('POST with nothing but path params still sends a JSON object', async () => {
    reply = () => ({ status: 200, body: { id: 'ses_1', signal: 'SIGKILL', deadline: null } });
    const { stdout } = await cli(['kill', 'ses_1'], { env: env() });
    assert.equal(stdout, 'SIGKILL sent to ses_1\n');
    assert.deepEqual([last().method, last().path, last().body], ['POST', '/v1/sessions/ses_1/kill', '{}']);
  });

  it('DELETE: the rest in the query string', async () => {
    reply = () => ({ status: 200, body: { stream: 'room', id: 'str_1', evicted: ['ses_1'], reaped: [] } });
    const { stdout } = await cli(['streams', 'close', 'room', '--force'], { env: env() });
    assert.equal(stdout, 'closed room (str_1); evicted ses_1\n');
    assert.deepEqual(
      [last().method, last().path, last().query],
      ['DELETE', '/v1/streams/room', { force: 'true' }],
    );
  });

  it('flags beat the environment; --zone sends the zone header; globals may precede the command', async () => {
    reply = () => ({ status: 200, body: { sessions: [] } });
    await cli(['--key', 'k-flag', '--zone', 'team-a', 'ps'], { env: { ...env(), WARREN_ZONE: 'ignored' } });
    assert.equal(last().headers.authorization, 'Bearer k-flag');
    assert.equal(last().headers['x-warren-zone'], 'team-a');
    await cli(['ps'], { env: { ...env(), WARREN_ZONE: 'from-env' } });
    assert.equal(last().headers['x-warren-zone'], 'from-env');
  });

  it('reads the key from <data-dir>/operator.key', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, '.warren'));
    writeFileSync(join(cwd, '.warren', 'operator.key'), 'k-file\n');
    reply = () => ({ status: 200, body: { fds: [] } });
    const { code } = await cli(['fds', 'list', '--url', server.url], { cwd });
    assert.equal(code, 0);
    assert.equal(last().headers.authorization, 'Bearer k-file');
    const other = tempDir();
    writeFileSync(join(other, 'operator.key'), 'k-dir');
    await cli(['fds', 'list'], { cwd, env: { WARREN_URL: server.url, WARREN_DATA_DIR: other } });
    assert.equal(last().headers.authorization, 'Bearer k-dir');
  });

  it('--json prints the output as it came', async () => {
    const body = { sessions: [], extra: { nested: [1, 2] } };
    reply = () => ({ status: 200, body });
    const { stdout } = await cli(['ps', '--json'], { env: env() });
    assert.deepEqual(JSON.parse(stdout), body);
  });

  it('fits tables to the terminal width', async () => {
    const message = {
      seq: 1,
      id: 'ev',
      ts: 0,
      streamId: 's',
      from: 'ses_1',
      text: 'y'.repeat(300),
      kind: 'message',
    };
    reply = () => ({ status: 200, body: { stream: {}, messages: [message] } });
    const { stdout } = await cli(['streams', 'transcript', 'room'], { env: env(), columns: 50 });
    for (const line of stdout.trimEnd().split('\n')) assert.ok(line.length <= 50, line);
    assert.ok(stdout.includes('…'));
  });

  it('an error reply prints error [code]: message and exits 1', async () => {
    reply = () => ({
      status: 404,
      body: {
        error: { code: 'not_found', message: 'stream "nope" does not exist', details: { what: 'stream' } },
      },
    });
    const { code, stdout, stderr } = await cli(['streams', 'transcript', 'nope'], { env: env() });
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.equal(stderr, 'error [not_found]: stream "nope" does not exist\n');
  });

  it('an error reply that is not JSON still gets a code', async () => {
    reply = () => ({ status: 502, body: 'bad gateway' });
    const { code, stderr } = await cli(['ps'], { env: env() });
    assert.equal(code, 1);
    assert.equal(stderr, 'error [http_502]: bad gateway\n');
  });
});

describe('client without a server', () => {
  it('says so when nothing listens at the URL', async () => {
    const gone = await fakeServer(() => ({ status: 200, body: {} }));
    await gone.close();
    const { code, stderr } = await cli(['ps'], { env: { WARREN_URL: gone.url, WARREN_API_KEY: 'k' } });
    assert.equal(code, 1);
    assert.ok(stderr.includes(`cannot reach warren at ${gone.url} — is \`warren serve\` running?`), stderr);
  });

  it('says where it looked for a key', async () => {
    const cwd = tempDir();
    const { code, stderr } = await cli(['ps'], { cwd, env: { WARREN_URL: 'http://127.0.0.1:9' } });
    assert.equal(code, 1);
    assert.match(stderr, /no API key/);
    assert.ok(stderr.includes('WARREN_API_KEY'));
    assert.ok(stderr.includes(join(cwd, '.warren', 'operator.key')), stderr);
  });

  it('rejects a malformed URL', async () => {
    const { code, stderr } = await cli(['ps', '--url', 'not a url', '--key', 'k']);
    assert.equal(code, 1);
    assert.match(stderr, /invalid server URL "not a url"/);
  });
});
