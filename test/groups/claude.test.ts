/**
 * A real Claude Code agent (the `claude` CLI, model API mocked on loopback) as a group's
 * agent: its settings get seed 002's MCP entry (`arizuko`: `socat STDIO UNIX-CONNECT:<the
 * group's router.sock>`), and it calls `send_message` and `schedule_task` through it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ClaudeCodeRuntime } from '../../src/runtimes/claude-code/index.ts';
import { startHttp } from '../helpers/http.ts';
import {
  allToolResults,
  type MessagesRequest,
  startMockAnthropic,
  toolNames,
} from '../helpers/mock-anthropic.ts';
import { call, forEachWarren, until } from '../helpers/warrens.ts';
import { type Any, dataDir, groupsOf, socatSkip } from './helpers.ts';

const home = mkdtempSync(join(tmpdir(), 'wg-claude-'));
// The CLI may still write its cache as its process ends: removal retries (as claude-agents.ts does).
after(() => rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));

/** The model: send a message, then schedule a task, then say done — each through the group's socket. */
function model(req: MessagesRequest) {
  const results = allToolResults(req);
  if (results.length === 0) {
    return {
      toolUses: [
        { name: 'mcp__arizuko__send_message', input: { chat_jid: 'tg:42', text: 'hello from claude' } },
      ],
    };
  }
  if (results.length === 1) {
    return {
      toolUses: [
        {
          name: 'mcp__arizuko__schedule_task',
          input: {
            name: 'nightly',
            cron: '0 2 * * *',
            task: { title: 'nightly', prompt: 'report', hold: true },
          },
        },
      ],
    };
  }
  return { text: 'done' };
}

forEachWarren(
  'groups: a Claude Code agent on its group socket',
  (t) => {
    it('calls send_message and schedule_task through socat on its group’s socket', {
      timeout: 120_000,
      skip: socatSkip(),
    }, async () => {
      const m = await startMockAnthropic(model);
      after(() => m.close());
      const dir = dataDir();
      const h = await startHttp(t, {
        runtimes: [new ClaudeCodeRuntime()],
        plugins: { config: { groups: { dataDir: dir } } },
      });
      const w = h.warren;
      mkdirSync(join(home, '.claude'), { recursive: true });
      const agent = {
        runtime: 'claude-code',
        env: { ...m.env(), HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') },
      };
      await call(w, 'register_group', { folder: 'main', agent });
      await call(w, 'register_group', { folder: 'main/a' });
      await call(w, 'add_route', { seq: 1, match: 'platform=telegram', target: 'main/a' });
      const r = await call(w, 'groups_inbound', {
        platform: 'telegram',
        room: '42',
        chat_jid: 'tg:42',
        sender: 'ann',
        verb: 'message',
        text: 'say hello and plan the night',
      });
      assert.equal(r.how, 'started');

      const sent = await until(
        async () => ((await call(w, 'events', { type: 'group.sent' })).events as Any[])[0],
        60_000,
        'the agent to send a message',
      );
      assert.equal(sent.actor, 'operator:group:main/a');
      assert.deepEqual([sent.payload.chat_jid, sent.payload.text], ['tg:42', 'hello from claude']);
      const sched = await until(
        async () => (await call(w, 'schedule_list', {})).schedules[0],
        60_000,
        'the schedule',
      );
      assert.equal(sched.name, 'nightly');
      assert.equal(sched.cron, '0 2 * * *');
      assert.equal(sched.createdBy, 'operator:group:main/a');
      await until(
        async () => (await call(w, 'session_show', { id: r.sessionId })).session.lastMessage === 'done',
        60_000,
        'done',
      );

      // The CLI saw the group's tools (tier 1) under the seed's server name, through socat.
      const offered = toolNames(m.messages[0]!);
      assert.ok(offered.includes('mcp__arizuko__send_message'), offered.join(','));
      assert.ok(offered.includes('mcp__arizuko__schedule_task'));
      assert.ok(!offered.includes('mcp__arizuko__spawn_group'), 'a tier-1 group is not offered root tools');
      const results = allToolResults(m.messages.at(-1)!);
      assert.equal(results.length, 2);
      for (const res of results) assert.notEqual(res.isError, true, JSON.stringify(res));
      const started = (
        (await call(w, 'session_events', { id: r.sessionId, limit: 1000 })).events as Any[]
      ).find((e) => e.type === 'session.claude_started');
      assert.ok((started.payload.args as string[]).some((a) => a.includes('mcp__arizuko')));

      // The agent ends: its socket goes with it.
      await call(w, 'kill', { id: r.sessionId });
      await until(() => !groupsOf(w).sockets.isOpen('main/a'), 15_000, 'the socket to close');
    });
  },
  ['sqlite'],
);
