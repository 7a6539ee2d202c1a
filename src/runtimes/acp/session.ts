import { join } from 'node:path';
import type {
  ClientConnection,
  InitializeResponse,
  McpServer,
  SessionConfigOption,
  SessionModeState,
} from '@agentclientprotocol/sdk';
import { packageRoot } from '../../util/package-root.ts';
import type { AgentContext } from '../types.ts';
import type { AcpConfig } from './config.ts';
import { selectValues } from './render.ts';
import { fire } from './stream.ts';

/** Opening an ACP session: new, loaded or resumed, with warren as its MCP server and the spawn's model and mode. */

/** `bin/warren.js`, for agents that only take stdio MCP servers (`warren mcp` is the shim). */
const WARREN_BIN = join(packageRoot(import.meta.url), 'bin', 'warren.js');

/** What opening a session needs of the agent: its connection, a bounded step, whether it exited. */
export interface SessionIo {
  ctx: AgentContext;
  config: AcpConfig;
  conn: ClientConnection;
  cwd: string;
  /** The ACP session being opened (set by `target`). */
  sessionId(): string | null;
  /** Updates of this session are now the agent's; `replaying` marks `session/load`'s history. */
  target(sessionId: string | null, replaying: boolean): void;
  step<T>(what: string, p: Promise<T>): Promise<T>;
  exited(): boolean;
}

export async function openSession(
  io: SessionIo,
  init: InitializeResponse,
  mcpServers: McpServer[],
): Promise<{
  how: 'new' | 'load' | 'resume';
  note?: string;
  configOptions: SessionConfigOption[] | null | undefined;
  modes: SessionModeState | null | undefined;
}> {
  const { ctx, conn, cwd } = io;
  const caps = init.agentCapabilities ?? {};
  const saved = typeof ctx.resumeState?.acpSessionId === 'string' ? ctx.resumeState.acpSessionId : null;
  let note: string | undefined;
  if (saved) {
    if (caps.loadSession) {
      io.target(saved, true);
      try {
        const res = await io.step(
          'session/load',
          conn.agent.request('session/load', { sessionId: saved, cwd, mcpServers }),
        );
        return { how: 'load', configOptions: res.configOptions, modes: res.modes };
      } catch (error) {
        if (io.exited()) throw error;
        note = `${(error as Error).message}; started a new session, history was not restored`;
      } finally {
        io.target(saved, false);
      }
    } else if (caps.sessionCapabilities?.resume) {
      io.target(saved, false);
      try {
        const res = await io.step(
          'session/resume',
          conn.agent.request('session/resume', { sessionId: saved, cwd, mcpServers }),
        );
        return { how: 'resume', configOptions: res.configOptions, modes: res.modes };
      } catch (error) {
        if (io.exited()) throw error;
        note = `${(error as Error).message}; started a new session, history was not restored`;
      }
    } else {
      note =
        'the agent supports neither session/load nor session/resume: started a new session, history was not restored';
    }
    io.target(null, false);
  } else if (ctx.resumeState) {
    note = 'no ACP session was saved: started a new session, history was not restored';
  }
  const res = await io.step('session/new', conn.agent.request('session/new', { cwd, mcpServers }));
  io.target(res.sessionId, false);
  return { how: 'new', ...(note ? { note } : {}), configOptions: res.configOptions, modes: res.modes };
}

/** Warren's MCP endpoint, in the form the agent takes. */
export function mcpServersFor(
  ctx: AgentContext,
  config: AcpConfig,
  init: InitializeResponse,
): {
  servers: McpServer[];
  mode: 'http' | 'stdio' | 'none';
  note?: string;
} {
  if (config.mcp === 'none') return { servers: [], mode: 'none', note: 'config.mcp is none' };
  if (!ctx.mcpUrl || !ctx.url) {
    return {
      servers: [],
      mode: 'none',
      note: 'warren is not listening on HTTP, so it offers no MCP server',
    };
  }
  const http = init.agentCapabilities?.mcpCapabilities?.http === true;
  if (config.mcp === 'http' || (config.mcp === 'auto' && http)) {
    return {
      mode: 'http',
      servers: [
        {
          type: 'http',
          name: 'warren',
          url: ctx.mcpUrl,
          headers: [{ name: 'Authorization', value: `Bearer ${ctx.token}` }],
        },
      ],
    };
  }
  // Every ACP agent takes stdio MCP servers: the `warren mcp` shim bridges to the daemon.
  return {
    mode: 'stdio',
    servers: [
      {
        name: 'warren',
        command: process.execPath,
        args: [WARREN_BIN, 'mcp'],
        env: [
          { name: 'WARREN_URL', value: ctx.url },
          { name: 'WARREN_TOKEN', value: ctx.token },
        ],
      },
    ],
  };
}

/** The spawn's model (and config.mode), where the agent lets a client choose them. */
export async function applyOptions(
  io: SessionIo,
  options: SessionConfigOption[] | null | undefined,
  modes: SessionModeState | null | undefined,
): Promise<void> {
  const { ctx, config } = io;
  const sessionId = io.sessionId()!;
  const model = ctx.spec.model;
  if (model) {
    const opt = options?.find((o) => o.type === 'select' && (o.category === 'model' || o.id === 'model'));
    const values = opt ? selectValues(opt) : [];
    const match =
      values.find((v) => v.value === model) ??
      values.find((v) => v.name.toLowerCase() === model.toLowerCase());
    if (!opt) {
      fire(ctx.sink.event('model', { model, applied: false, reason: 'the agent offers no model option' }));
    } else if (!match) {
      fire(
        ctx.sink.event('model', {
          model,
          applied: false,
          reason: `not among the agent's models: ${values.map((v) => v.value).join(', ')}`,
        }),
      );
    } else {
      try {
        if (opt.currentValue !== match.value) {
          await io.step(
            'session/set_config_option',
            io.conn.agent.request('session/set_config_option', {
              sessionId,
              configId: opt.id,
              value: match.value,
            }),
          );
        }
        fire(ctx.sink.event('model', { model: match.value, applied: true, configId: opt.id }));
      } catch (error) {
        if (io.exited()) throw error;
        fire(ctx.sink.event('model', { model, applied: false, reason: (error as Error).message }));
      }
    }
  }
  const mode = config.mode;
  if (mode) {
    const m = modes?.availableModes.find((x) => x.id === mode || x.name.toLowerCase() === mode.toLowerCase());
    if (!m) {
      fire(ctx.sink.event('mode', { mode, applied: false, reason: 'the agent offers no such mode' }));
    } else {
      try {
        if (modes?.currentModeId !== m.id) {
          await io.step(
            'session/set_mode',
            io.conn.agent.request('session/set_mode', { sessionId, modeId: m.id }),
          );
        }
        fire(ctx.sink.event('mode', { mode: m.id, applied: true }));
      } catch (error) {
        if (io.exited()) throw error;
        fire(ctx.sink.event('mode', { mode, applied: false, reason: (error as Error).message }));
      }
    }
  }
}
