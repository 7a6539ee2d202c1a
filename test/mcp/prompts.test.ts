import assert from 'node:assert/strict';
import { it } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startHttp } from '../helpers/http.ts';
import { mcpClients } from '../helpers/mcp.ts';
import { asSession, call, forEachWarren, idleScript, until } from '../helpers/warrens.ts';

const textOf = (r: { messages: Array<{ content: { type: string; text?: string } }> }) =>
  r.messages
    .filter((m) => m.content.type === 'text')
    .map((m) => m.content.text)
    .join('\n');

/**
 * Prompts through the official SDK client. SQLite only: prompts render from kernel reads
 * (session_show, listFds) whose backends the kernel's own suites cover; nothing here is
 * dialect-specific.
 */
forEachWarren(
  'MCP prompts',
  (t) => {
    const { connect, closeAll } = mcpClients();

    it('each caller is offered the prompts whose tools it may call', async () => {
      const h = await startHttp(t);
      try {
        const w = h.warren;
        const names = async (bearer: string) =>
          (await (await connect(h, bearer)).listPrompts()).prompts.map((p) => p.name);
        assert.deepEqual(
          await names(h.key),
          ['orchestrate', 'review'],
          'operators have no fd 1 to wrap up on',
        );
        const lead = (await call(w, 'ipc_spawn', { script: idleScript })).session.id;
        assert.deepEqual(await names(h.tokenOf(lead)), ['orchestrate', 'review', 'wrap-up']);
        const asLead = asSession(lead);
        // A worker's job holds none of the tools these prompts drive (ipc_spawn, session_show…).
        const agent = (await call(w, 'ipc_spawn', { script: idleScript, job: 'worker' }, asLead)).session.id;
        assert.deepEqual(await names(h.tokenOf(agent)), [], 'a worker is offered none of them');

        const c = await connect(h, h.key);
        const list = (await c.listPrompts()).prompts;
        for (const p of list) assert.ok(p.description && p.title, p.name);
        assert.deepEqual(
          list.find((p) => p.name === 'orchestrate')?.arguments?.map((a) => [a.name, a.required ?? false]),
          [
            ['goal', true],
            ['persona', false],
            ['task', false],
          ],
        );
        // A prompt the caller is not offered cannot be fetched either.
        const agentClient = await connect(h, h.tokenOf(agent));
        await assert.rejects(
          agentClient.getPrompt({ name: 'orchestrate', arguments: { goal: 'x' } }),
          /Unknown prompt/,
        );
      } finally {
        await closeAll();
      }
    });

    it('orchestrate teaches spawn, pipes, SIGCHLD and closing; tasks only where they exist', async () => {
      const h = await startHttp(t);
      try {
        // The orchestration plugin is loaded: a lead without the task tools sees no tasks.
        const lead = (await call(h.warren, 'ipc_spawn', { script: idleScript, grants: { deny: ['task_*'] } }))
          .session.id;
        const c = await connect(h, h.tokenOf(lead));
        const r = await c.getPrompt({
          name: 'orchestrate',
          arguments: { goal: 'port the parser to Rust', persona: 'rustacean' },
        });
        const text = textOf(r);
        assert.match(text, /^Goal: port the parser to Rust/);
        for (const word of [
          'ipc_spawn',
          'pipeFd',
          'lifecycleFd',
          'SIGCHLD',
          'ipc_wait',
          'ipc_close',
          'reaps',
          'fd 1',
        ])
          assert.ok(text.includes(word), word);
        assert.match(text, /persona: "rustacean"/);
        assert.ok(!text.includes('task_create'), 'no tasks without task_create');
        await assert.rejects(c.getPrompt({ name: 'orchestrate', arguments: {} }), (e: unknown) => {
          assert.ok(e instanceof McpError);
          assert.equal(e.code, -32602);
          assert.match(e.message, /Missing required argument: goal/);
          return true;
        });
        await assert.rejects(
          c.getPrompt({ name: 'orchestrate', arguments: { goal: 'x'.repeat(20_000) } }),
          /longer than/,
        );
      } finally {
        await closeAll();
      }
    });

    it('orchestrate mentions task_create when the orchestration plugin offers it', async () => {
      const h = await startHttp(t);
      try {
        const c = await connect(h, h.key);
        const r = await c.getPrompt({ name: 'orchestrate', arguments: { goal: 'g', task: 'task_1' } });
        const text = textOf(r);
        assert.match(text, /task_create/);
        assert.match(text, /Break down task task_1/);
        assert.match(text, /Report the combined result\.$/m, 'an operator reports, not on fd 1');
      } finally {
        await closeAll();
      }
    });

    it('review reads the child’s last message; another subtree’s child is refused', async () => {
      const h = await startHttp(t);
      try {
        const w = h.warren;
        const lead = (await call(w, 'ipc_spawn', { script: idleScript })).session.id;
        const asLead = asSession(lead);
        const child = (
          await call(
            w,
            'ipc_spawn',
            { title: 'counter', script: { steps: [{ say: 'the answer is 42' }, { listen: {} }] } },
            asLead,
          )
        ).session.id;
        await until(async () => (await w.kernel.session(asLead, child)).lastMessage === 'the answer is 42');
        const c = await connect(h, h.tokenOf(lead));
        const r = await c.getPrompt({ name: 'review', arguments: { session: child } });
        const text = textOf(r);
        assert.match(text, new RegExp(`Review the work of session ${child} \\(“counter”\\)`));
        assert.match(text, /<<<\nthe answer is 42\n>>>/);
        assert.ok(text.includes(`warren://streams/pipe%3A${child}/transcript`));
        const embedded = r.messages.find((m) => m.content.type === 'resource')?.content as {
          resource: { uri: string; text: string };
        };
        assert.equal(embedded.resource.uri, `warren://sessions/${child}`);
        assert.equal(JSON.parse(embedded.resource.text).session.lastMessage, 'the answer is 42');

        const stranger = (await call(w, 'ipc_spawn', { script: idleScript })).session.id;
        await assert.rejects(
          c.getPrompt({ name: 'review', arguments: { session: stranger } }),
          (e: unknown) => {
            assert.ok(e instanceof McpError);
            assert.equal((e.data as { code?: string }).code, 'forbidden');
            return true;
          },
        );
      } finally {
        await closeAll();
      }
    });

    it('wrap-up lists the caller’s fds and tells it to report on fd 1, keeping fds 0–2', async () => {
      const h = await startHttp(t);
      try {
        const w = h.warren;
        const lead = (await call(w, 'ipc_spawn', { script: idleScript })).session.id;
        const asLead = asSession(lead);
        const child = (await call(w, 'ipc_spawn', { script: idleScript, pipe: 'async' }, asLead)).session.id;
        const c = await connect(h, h.tokenOf(lead));
        const text = textOf(
          await c.getPrompt({ name: 'wrap-up', arguments: { summary: 'the test results' } }),
        );
        assert.ok(text.includes(`fd 1: pipe:${lead}`), text);
        assert.ok(text.includes(`pipe:${child}`));
        assert.ok(text.includes(`lifecycle:${child}`));
        assert.match(text, /Keep fds 0–2/);
        assert.match(text, /report on fd 1 with ipc_write, covering: the test results/);
      } finally {
        await closeAll();
      }
    });
  },
  ['sqlite'],
);
