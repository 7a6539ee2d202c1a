import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { needs } from '../helpers/system-tools.ts';
import { call, forEachWarren, until } from '../helpers/warrens.ts';
import { fails } from '../orchestration/helpers.ts';
import { adopted, awaitTurn, openBridge, send, workRoot } from './helpers.ts';

/**
 * A command agent: says it is idle once started (the protocol's startup idle: without it, each
 * new session waited QUIET_START_MS for it, then OWED_IDLE_MS for an idle it was taken to owe),
 * then answers each input line with `done: <text>` and says it is idle again.
 */
const ECHO = [
  process.execPath,
  '-e',
  `console.log(JSON.stringify({ warren: 'idle' }));
   require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
     const m = JSON.parse(l);
     console.log('done: ' + m.text.split('] ').pop());
     console.log(JSON.stringify({ warren: 'idle' }));
   });`,
];

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8' }).trim();

function repoIn(root: string): string {
  const repo = join(root, 'repo');
  mkdirSync(repo);
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), 'hello\n');
  git(repo, 'add', '.');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'init');
  return repo;
}

// Every tmux call of this file (the test's and the plugin's) goes to a private server.
const tmuxDir = mkdtempSync(join(tmpdir(), 'warren-tmux-'));
const savedTmux = process.env.TMUX_TMPDIR;
before(() => {
  process.env.TMUX_TMPDIR = tmuxDir;
  delete process.env.TMUX;
});
after(() => {
  try {
    execFileSync('tmux', ['kill-server'], { stdio: 'ignore' });
  } catch {}
  if (savedTmux === undefined) delete process.env.TMUX_TMPDIR;
  else process.env.TMUX_TMPDIR = savedTmux;
  rmSync(tmuxDir, { recursive: true, force: true });
});

forEachWarren('turns: sessions for coordinators', (t) => {
  describe('start_session and delegation', () => {
    it('starts a command agent in its own git worktree; the repository is its project', async () => {
      const { root } = workRoot();
      const repo = repoIn(root);
      const w = await openBridge(t, root);
      const { session } = await call(w, 'bridge_start_session', {
        kind: 'command',
        cwd: repo,
        config: { command: ECHO },
        worktree: 'feature-x',
        allow_mutation: true,
      });
      assert.equal(session.project, repo);
      assert.equal(session.cwd, join(root, 'repo.worktrees', 'feature-x'));
      assert.ok(existsSync(join(session.cwd, 'README.md')));
      assert.match(git(repo, 'worktree', 'list'), /repo\.worktrees\/feature-x .*\[coord\/feature-x\]/);
      const { turn } = await send(w, session.session_id, 'hello');
      const done = await awaitTurn(w, turn.turn_id);
      assert.deepEqual([done.status, done.final_response.text], ['completed', 'done: hello']);
    });

    it("read_tail of a warren session: its own last lines, newest last, whatever its zone's others said", async () => {
      const { root } = workRoot();
      const w = await openBridge(t, root);
      const start = async () =>
        (
          await call(w, 'bridge_start_session', {
            kind: 'command',
            cwd: root,
            config: { command: ECHO },
            allow_mutation: true,
          })
        ).session.session_id as string;
      const [quiet, chatty] = [await start(), await start()];
      for (const text of ['one', 'two', 'three'])
        await awaitTurn(w, (await send(w, quiet, text)).turn.turn_id);
      // The other session talks after: its lines must not push these out of the tail.
      for (let i = 0; i < 4; i++) await awaitTurn(w, (await send(w, chatty, `noise ${i}`)).turn.turn_id);
      const tail = await call(w, 'bridge_read_tail', { session_id: quiet, lines: 2 });
      assert.deepEqual([tail.source, tail.text], ['log', 'done: two\ndone: three']);
    });

    it('worktree_policy remove: the worktree goes when the session stops', async () => {
      const { root } = workRoot();
      const repo = repoIn(root);
      const w = await openBridge(t, root);
      const { session } = await call(w, 'bridge_start_session', {
        kind: 'command',
        cwd: repo,
        config: { command: ECHO },
        worktree: true,
        worktree_policy: 'remove',
        allow_mutation: true,
      });
      assert.ok(existsSync(session.cwd));
      await call(w, 'kill', { id: session.session_id });
      await until(
        async () => (await call(w, 'events', { type: 'coordinator.worktree_removed' })).events.length === 1,
        10_000,
        'the removal',
      );
      assert.equal(existsSync(session.cwd), false);
      assert.doesNotMatch(git(repo, 'worktree', 'list'), /repo\.worktrees/);
    });

    it('delegate_plan reuses a session and sends one workflow-tagged turn; delegation.started is logged', async () => {
      const { root, work } = workRoot();
      const w = await openBridge(t, root);
      const sid = await adopted(w, work);
      const d = await call(w, 'bridge_delegate_plan', {
        session_id: sid,
        task: 'plan the refactor',
        allow_mutation: true,
      });
      assert.equal(d.workflow, 'plan');
      const turn = await awaitTurn(w, d.turn_id);
      assert.equal(turn.workflow, 'plan');
      assert.match(turn.prompt, /^\[workflow: plan\]/);
      const ev = (await call(w, 'events', { type: 'delegation.started' })).events[0];
      assert.deepEqual([ev.payload.turn_id, ev.session_id], [d.turn_id, sid]);
      const started = await call(w, 'bridge_delegate_execute', {
        kind: 'command',
        cwd: work,
        config: { command: ECHO },
        task: 'do it',
        allow_mutation: true,
      });
      const t2 = await awaitTurn(w, started.turn_id);
      assert.equal(t2.status, 'completed');
      assert.equal(started.artifacts.root, work);
    });
  });

  describe('tmux', { skip: needs('tmux') }, () => {
    it('adopts a live pane inside the allowlist; prompts are keys; the tail is advisory; report_status ends turns', async () => {
      const { root, work } = workRoot();
      const w = await openBridge(t, root);
      const name = `pane${Date.now()}`;
      // A shell-less pane that writes what it is typed into a file.
      execFileSync('tmux', [
        'new-session',
        '-d',
        '-s',
        name,
        '-c',
        work,
        '--',
        'sh',
        '-c',
        'cat > typed.txt',
      ]);
      const { session } = await call(w, 'bridge_register_session', {
        tmux_target: `${name}:0.0`,
        allow_mutation: true,
      });
      assert.deepEqual([session.mode, session.cwd], ['tmux', work]);
      const { turn } = await send(w, session.session_id, 'look at this');
      await until(
        () => readFileSync(join(work, 'typed.txt'), 'utf8').includes('look at this'),
        5000,
        'keys to land',
      );
      // The screen is advisory and repaints on its own time: read it until it shows the prompt.
      const tail = await until(
        async () => {
          const r = await call(w, 'bridge_read_tail', { session_id: session.session_id, lines: 10 });
          return /look at this/.test(r.text) ? r : null;
        },
        5000,
        'the prompt on the pane',
      );
      assert.equal(tail.advisory, true);
      const mid = await call(w, 'bridge_await_turn', { turn_id: turn.turn_id, timeout_ms: 100 });
      assert.equal(mid.timed_out, true);
      await call(w, 'bridge_report_status', {
        session_id: session.session_id,
        status: 'completed',
        summary: 'read it',
        allow_mutation: true,
      });
      assert.equal((await awaitTurn(w, turn.turn_id, 1000)).final_response.source, 'report_status');
      await fails(
        call(w, 'bridge_register_session', { tmux_target: 'nosuchpane:0.0', allow_mutation: true }),
        'not_found',
      );
      const outside = realpathSync(mkdtempSync(join(tmpdir(), 'warren-outside-')));
      after(() => rmSync(outside, { recursive: true, force: true }));
      execFileSync('tmux', [
        'new-session',
        '-d',
        '-s',
        `${name}o`,
        '-c',
        outside,
        '--',
        'sh',
        '-c',
        'sleep 30',
      ]);
      await fails(
        call(w, 'bridge_register_session', { tmux_target: `${name}o:0.0`, allow_mutation: true }),
        'forbidden',
        /outside the allowed roots/,
      );
    });

    it('a visible session runs its CLI in a detached tmux session', async () => {
      const { root, work } = workRoot();
      const w = await openBridge(t, root);
      const { session } = await call(w, 'bridge_start_session', {
        kind: 'command',
        cwd: work,
        visible: true,
        config: { command: 'cat > seen.txt' },
        allow_mutation: true,
      });
      assert.equal(session.mode, 'tmux');
      assert.match(
        execFileSync('tmux', ['list-sessions', '-F', '#{session_name}'], { encoding: 'utf8' }),
        new RegExp(session.session_id),
      );
      await send(w, session.session_id, 'visible prompt');
      await until(
        () =>
          existsSync(join(work, 'seen.txt')) &&
          readFileSync(join(work, 'seen.txt'), 'utf8').includes('visible prompt'),
        5000,
        'keys',
      );
    });
  });

  describe('fail-closed', () => {
    it('no mutation class, no consent, no roots, outside the roots, a bad id', async () => {
      const { root, work } = workRoot();
      const ro = await openBridge(t, root, { mutations: [] });
      await fails(
        call(ro, 'bridge_start_session', { kind: 'command', cwd: work, allow_mutation: true }),
        'forbidden',
        /not enabled/,
      );
      await ro.close();
      const rw = await openBridge(t, root);
      await fails(
        call(rw, 'bridge_start_session', { kind: 'command', cwd: work }),
        'forbidden',
        /allow_mutation/,
      );
      await fails(
        call(rw, 'bridge_start_session', { kind: 'command', cwd: tmpdir(), allow_mutation: true }),
        'forbidden',
        /outside the allowed roots/,
      );
      await fails(call(rw, 'bridge_read_turn', { turn_id: 'turn_../../x' }), 'invalid_input');
      await rw.close();
      const noRoots = await openBridge(t, root, { workdirRoots: [] });
      await fails(
        call(noRoots, 'bridge_start_session', { kind: 'command', cwd: work, allow_mutation: true }),
        'forbidden',
        /no working-directory roots/,
      );
      const pinned = await openBridge(t, root, { profile: 'team-a' });
      await fails(
        call(pinned, 'bridge_list_sessions', { profile: 'team-b' }),
        'forbidden',
        /scoped to profile/,
      );
    });
  });
});
