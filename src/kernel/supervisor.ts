import { randomBytes } from 'node:crypto';
import { TokenSigner } from '../auth/tokens.ts';
import type {
  AgentContext,
  AgentExit,
  AgentHandle,
  AgentSink,
  AgentSpec,
  RuntimeRegistry,
} from '../runtimes/types.ts';
import type { SessionsTable } from '../store/schema.ts';
import { parseJson } from '../util/json.ts';
import type { Core } from './core.ts';
import type { Delivery } from './delivery.ts';
import { WarrenError } from './errors.ts';
import { endSession, setStatus } from './lifecycle.ts';
import type { Principal } from './principal.ts';

export type SyscallInvoker = (
  principal: Principal,
  name: string,
  input: Record<string, unknown>,
) => Promise<unknown>;

/**
 * Owns the agent processes of this node: starts them, feeds their reports into the log in
 * order, and disposes of them. A session's reports are applied one at a time, in the order
 * the agent made them, even though each is its own write.
 */
export class Supervisor {
  private handles = new Map<string, AgentHandle>();
  private starting = new Map<string, Promise<void>>();
  private chains = new Map<string, Promise<unknown>>();
  invoke: SyscallInvoker = async () => {
    throw new WarrenError('unavailable', 'no syscall table is attached to this kernel');
  };

  constructor(
    private readonly core: Core,
    private readonly runtimes: RuntimeRegistry,
    private readonly delivery: Delivery,
    // Without the assembly's signer, tokens are signed with a key that dies with this kernel.
    private readonly mintToken: (sessionId: string, gen: number) => string = (() => {
      const signer = new TokenSigner(randomBytes(32));
      return (id: string, gen: number) => signer.mint(id, gen);
    })(),
  ) {}

  /** Which tools a session may call: set by the assembly (the syscall table and its gating). */
  toolsOf: (row: SessionsTable) => readonly string[] = () => [];

  has(sessionId: string): boolean {
    return this.handles.has(sessionId);
  }

  runtime(name: string) {
    const rt = this.runtimes.get(name);
    if (!rt) {
      throw new WarrenError(
        'runtime_unavailable',
        `unknown runtime ${JSON.stringify(name)}; known: ${[...this.runtimes.keys()].join(', ')}`,
        {
          runtime: name,
        },
      );
    }
    return rt;
  }

  /** Start or resume a session's agent. Failure to start ends the session as crashed. */
  start(sessionId: string, how: 'start' | 'resume'): Promise<void> {
    const running = this.starting.get(sessionId);
    if (running) return running;
    const p = this.doStart(sessionId, how).finally(() => this.starting.delete(sessionId));
    this.starting.set(sessionId, p);
    return p;
  }

  private async doStart(sessionId: string, how: 'start' | 'resume'): Promise<void> {
    if (this.handles.has(sessionId)) return;
    const row = await this.core.store.reader
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirst();
    if (!row || row.status === 'stopped') return;
    const sink = this.sinkFor(row);
    try {
      const rt = this.runtime(row.runtime);
      // Running before the agent starts, so its first reports (idle, output) land after this.
      await this.apply(sessionId, async (tx, r) => {
        if (r.status === 'pending' || r.status === 'suspended') {
          await setStatus(tx, this.core, r, 'running', { reason: how === 'resume' ? 'resumed' : 'started' });
        }
      });
      const ctx: AgentContext = {
        sessionId,
        zone: row.zone,
        depth: row.depth,
        title: row.title,
        spec: parseJson<AgentSpec>(row.spec, { prompt: null, config: {}, cwd: null, model: null, env: {} }),
        token: this.mintToken(sessionId, row.token_gen ?? 0),
        url: this.core.config.publicUrl,
        mcpUrl: this.core.config.publicUrl ? `${this.core.config.publicUrl}/mcp` : null,
        tools: this.toolsOf(row),
        resumeState:
          how === 'resume' ? parseJson<Record<string, unknown> | null>(row.runtime_state, null) : null,
        sink,
        call: (name, input) =>
          this.invoke({ kind: 'session', sessionId, zone: row.zone, depth: row.depth }, name, input),
        clock: this.core.clock,
      };
      const handle = await rt.start(ctx);
      // The session may have been killed while its agent was starting.
      const now = await this.core.store.reader
        .selectFrom('sessions')
        .select('status')
        .where('id', '=', sessionId)
        .executeTakeFirst();
      if (!now || now.status === 'stopped' || now.status === 'suspended') {
        await handle.stop();
        return;
      }
      this.handles.set(sessionId, handle);
      await this.delivery.attach(sessionId, handle);
    } catch (error) {
      void sink.exit({ reason: 'crashed', error: `could not start: ${(error as Error).message}` });
    }
  }

  /** Dispose of the agent process, if this node runs one. */
  async stop(sessionId: string): Promise<void> {
    await this.starting.get(sessionId)?.catch(() => {});
    const handle = this.handles.get(sessionId);
    this.handles.delete(sessionId);
    this.delivery.detach(sessionId);
    if (handle) await handle.stop().catch(() => {});
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.handles.keys()].map((id) => this.stop(id)));
    await Promise.all([...this.chains.values()].map((p) => p.catch(() => {})));
  }

  /** Queue a write about one session behind its earlier ones. */
  private apply(
    sessionId: string,
    fn: (
      tx: Parameters<Parameters<Core['store']['writer']['write']>[0]>[0],
      row: SessionsTable,
    ) => Promise<void>,
  ): Promise<void> {
    const prev = this.chains.get(sessionId) ?? Promise.resolve();
    const next = prev
      .catch(() => {})
      .then(() =>
        this.core.store.writer.write(async (tx) => {
          const row = await tx.db
            .selectFrom('sessions')
            .selectAll()
            .where('id', '=', sessionId)
            .executeTakeFirst();
          if (row) await fn(tx, row);
        }),
      );
    const tracked = next.catch((error) => {
      console.error(`warren: recording a report of ${sessionId} failed:`, (error as Error).message);
    });
    this.chains.set(sessionId, tracked);
    void tracked.then(() => {
      if (this.chains.get(sessionId) === tracked) this.chains.delete(sessionId);
    });
    return next;
  }

  private sinkFor(row: SessionsTable): AgentSink {
    const id = row.id;
    const zone = row.zone;
    const append = (type: string, payload: Record<string, unknown>) =>
      this.apply(id, async (tx) => {
        tx.append({ zone, type, actor: id, session_id: id, payload });
      });
    return {
      output: (text) =>
        this.apply(id, async (tx) => {
          await tx.db
            .updateTable('sessions')
            .set({ last_message: text, updated_at: tx.now })
            .where('id', '=', id)
            .execute();
          tx.append({ zone, type: 'session.output', actor: id, session_id: id, payload: { text } });
        }),
      event: (type, payload) => append(`session.${type}`, payload),
      usage: (u) =>
        this.apply(id, async (tx, r) => {
          const cur = parseJson<Record<string, number>>(r.usage, {});
          const sum: Record<string, number> = { ...cur };
          for (const [k, v] of Object.entries(u)) if (typeof v === 'number') sum[k] = (sum[k] ?? 0) + v;
          await tx.db
            .updateTable('sessions')
            .set({ usage: JSON.stringify(sum) })
            .where('id', '=', id)
            .execute();
          tx.append({ zone, type: 'session.usage', actor: id, session_id: id, payload: { ...u } });
        }),
      busy: () =>
        this.apply(id, async (tx, r) => {
          if (r.status === 'idle' || r.status === 'pending')
            await setStatus(tx, this.core, r, 'running', { actor: id });
        }),
      idle: () => {
        const consumed = this.delivery.turnEnding(id);
        return this.apply(id, async (tx, r) => {
          if (r.status === 'running' || r.status === 'pending')
            await setStatus(tx, this.core, r, 'idle', { actor: id });
        }).then(() => this.delivery.turnRecorded(id, consumed));
      },
      saveState: (state) =>
        this.apply(id, async (tx) => {
          await tx.db
            .updateTable('sessions')
            .set({ runtime_state: JSON.stringify(state) })
            .where('id', '=', id)
            .execute();
        }),
      exit: (result: AgentExit) => {
        this.handles.delete(id);
        this.delivery.detach(id);
        void this.apply(id, async (tx, r) => {
          if (r.status === 'stopped') return;
          if (r.status === 'suspended') return; // disposed on purpose (SIGSTOP, lost transport)
          const reason =
            result.reason === 'completed' && r.term_deadline !== null ? 'terminated' : result.reason;
          const detail: Record<string, unknown> = {};
          if (result.error) detail.error = result.error;
          if (result.code !== undefined) detail.code = result.code;
          if (result.stderrTail) detail.stderrTail = result.stderrTail;
          await endSession(tx, this.core, id, reason, id, detail);
        });
      },
    };
  }
}
