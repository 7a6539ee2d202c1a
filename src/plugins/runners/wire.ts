/**
 * The runner protocol: JSON text frames over one WebSocket the runner opens to the server
 * (`GET /v1/runners/connect`, `Authorization: Bearer wrt_…`). The server never dials out, so
 * a runner behind NAT works. Requests carry an `id`; their answer is a `result` with the same id.
 */

/** Where a runner connects. */
export const CONNECT_PATH = '/v1/runners/connect';

/** Close codes a runner acts on: a refused token is final, the rest are retried. */
export const CLOSE_REFUSED = 4401;
export const CLOSE_PROTOCOL = 4400;
export const CLOSE_REPLACED = 4409;

/** Largest frame either side accepts (a delivered batch, an HTTP body chunk). */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;

/** What an agent on a runner is started with: its AgentContext minus what cannot travel. */
export interface StartContext {
  sessionId: string;
  zone: string;
  depth: number;
  title: string | null;
  spec: {
    prompt: string | null;
    config: Record<string, unknown>;
    cwd: string | null;
    model: string | null;
    env: Record<string, string>;
    systemPrompt?: string;
  };
  token: string;
  tools: readonly string[];
  resumeState: Record<string, unknown> | null;
  /** Absent from servers before it: then a resume is known only by its saved state. */
  resuming?: boolean;
  traceparent?: string;
  /**
   * The server holds this agent's model upstream (docs/gateway.md): the runner points the
   * agent at `<its tunnel>/v1/gateway/<provider>` with `token` as the key. Absent from servers
   * before it, and when the gateway is off or the spawn gave no key.
   */
  gateway?: boolean;
}

export type ErrorBody = { code: string; message: string; details?: Record<string, unknown> };

/** Runner → server. */
export type RunnerFrame =
  | {
      t: 'hello';
      name: string;
      runtimes: string[];
      cwdRoot: string | null;
      hostname: string;
      pid: number;
      /** It answers `beat` frames (runners before the heartbeat do not: they are never timed out). */
      beats?: boolean;
    }
  /** The answer to the server's `beat`: the runner is running. */
  | { t: 'beat' }
  | { t: 'result'; id: number; ok: true; value?: unknown }
  | { t: 'result'; id: number; ok: false; error: ErrorBody }
  /**
   * A report of an agent (AgentSink method and its arguments); `id` when the runner awaits it.
   * `acks`, on `busy` and `idle`: the agent's `acksOnDeliver` then; `took`, on `idle`: the
   * number of the last `deliver` its agent was handed (both absent from older runners).
   */
  | {
      t: 'sink';
      id?: number;
      session: string;
      method: string;
      args: unknown[];
      deadline?: number;
      acks?: boolean;
      took?: number;
    }
  /** A syscall as the session (in-process agents such as `script`). */
  | {
      t: 'call';
      id: number;
      session: string;
      name: string;
      input: Record<string, unknown>;
      deadline?: number;
    }
  /** The MCP/HTTP tunnel: a request an agent made to the runner's local endpoint. */
  | {
      t: 'http';
      id: number;
      method: string;
      path: string;
      headers: Record<string, string>;
      body: string | null;
      /** The agent's own deadline (its `x-warren-deadline` header), when it gave one. */
      deadline?: number;
    }
  | { t: 'http-abort'; id: number };

/** Server → runner. */
export type ServerFrame =
  | { t: 'welcome'; connection: string; environment: string }
  /**
   * The heartbeat (hub.ts): the runner's agents may run `leftMs` more without another beat (its
   * node's lease deadline, or the heartbeat window when sooner), and the runner should hear
   * the next beat within `withinMs`, or it takes its server for lost.
   */
  | { t: 'beat'; leftMs: number; withinMs: number }
  | { t: 'result'; id: number; ok: true; value?: unknown }
  | { t: 'result'; id: number; ok: false; error: ErrorBody }
  | { t: 'start'; id: number; runtime: string; ctx: StartContext; deadline?: number }
  | { t: 'stop'; id: number; session: string; deadline?: number }
  | { t: 'finish'; session: string }
  /** `n`: the batch's number, 1, 2, … per agent (absent from older servers). */
  | { t: 'deliver'; session: string; input: { messages: unknown[]; text: string }; n?: number }
  | { t: 'http-head'; id: number; status: number; headers: Record<string, string> }
  /** A chunk of the response body, base64. */
  | { t: 'http-data'; id: number; chunk: string }
  | { t: 'http-end'; id: number; error?: string };

/**
 * A request's `deadline`: when its caller gives up on it, in ms since the epoch on the
 * sender's clock (the hosts' clocks are assumed in sync, NTP, well within the deadlines). A
 * request read after it (its receiver was paused, or the wire held it) is answered as expired
 * and not executed: its caller has gone on, perhaps to send it again.
 */
export const expired = (f: { deadline?: unknown }, now = Date.now()): boolean =>
  typeof f.deadline === 'number' && now > f.deadline;

/** What an expired request is answered. */
export const EXPIRED = {
  code: 'unavailable',
  message: 'expired: its caller’s deadline passed before it could be executed',
  details: { expired: true },
} as const;

/** The agent's header that gives a tunnelled request its deadline (ms since the epoch). */
export const DEADLINE_HEADER = 'x-warren-deadline';

/**
 * The deadline of a tunnelled request that gives none: this long after the runner read it (a
 * runner's own requests to the server wait as long). Past it the server does not execute it:
 * a request held that long (its server paused, the wire stalled) has been given up on.
 */
export const TUNNEL_DEADLINE_MS = 60_000;

/** The environment a runner name serves. */
export const environmentOf = (name: string) => `runner:${name}`;

/** Runner names: what an environment id can carry and a person can type. */
export const RUNNER_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
