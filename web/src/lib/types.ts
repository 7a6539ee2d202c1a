/** The shapes the UI reads from the REST API (docs/reference.md); only the fields it uses. */

// The log's event shape is the server's own (a type-only import: nothing of the server is bundled).
export type { LogEvent } from '../../../src/store/events.ts';

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  turns?: number;
}

export interface Session {
  id: string;
  zone: string;
  parentId: string | null;
  depth: number;
  status: string;
  endReason: string | null;
  endDetail: string | null;
  activity: string | null;
  suspendReason: string | null;
  parentClose?: string;
  runtime: string;
  title: string | null;
  lastMessage: string | null;
  turns: number;
  usage: Usage;
  subtreeUsage: Usage;
  createdAt: number;
  updatedAt: number;
  endedAt: number | null;
}

export interface Subscriber {
  fd: number;
  id: string;
  holder: string;
  permission: string;
  deliveryMode: string;
}

export interface Stream {
  id: string;
  name: string;
  kind: string;
  owner: string;
  sessionId: string | null;
  createdAt: number;
  closedAt: number | null;
  subscribers: Subscriber[];
}

export interface Message {
  seq: number;
  ts: number;
  from: string;
  text: string;
  kind?: string;
}

export interface Task {
  id: string;
  parentId: string | null;
  title: string;
  status: string;
  held?: boolean;
  review?: boolean;
  attempts?: number;
  sessionId: string | null;
  result?: string | null;
  reason?: string | null;
  createdAt: number;
  updatedAt?: number;
}

export interface Escalation {
  id: string;
  task: string;
  taskTitle: string | null;
  session: string | null;
  question: string;
  status: string;
  createdAt: number;
  answeredBy: string | null;
  answeredAt: number | null;
  context: Record<string, unknown>;
  answer: string | null;
}

export interface Schedule {
  id: string;
  name: string;
  kind: string;
  cron: string | null;
  tz: string | null;
  intervalMs: number | null;
  at: number | null;
  action: Record<string, unknown>;
  enabled: boolean;
  nextFireAt: number | null;
  overlap: string;
  createdBy: string;
  createdAt: number;
  fires: number;
  lastFireAt: number | null;
  lastOutcome: string | null;
}

export interface Finding {
  id: string;
  title: string;
  body: string;
  tags: string[];
  task: string | null;
  session: string | null;
  createdBy: string;
  createdAt: number;
  score?: number | null;
}

/** Plumbing streams, hidden unless "Show internals" (mirrors `streams list --internal`). */
export const isInternal = (s: Pick<Stream, 'name' | 'kind'>) =>
  s.kind !== 'named' || /^(lifecycle|pipe|stdin):/.test(s.name);
