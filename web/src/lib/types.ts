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

/** A finding as knowledge_search and knowledge_show give it: the plugin's own shape (type only). */
export type { FindingInfo as Finding } from '../../../src/plugins/knowledge/findings.ts';
/** A schedule as schedule_list gives it: the plugin's own shape (type only). */
export type { ScheduleView as Schedule } from '../../../src/plugins/scheduling/syscalls.ts';

/** Plumbing streams, hidden unless "Show internals" (mirrors `streams list --internal`). */
export const isInternal = (s: Pick<Stream, 'name' | 'kind'>) =>
  s.kind !== 'named' || /^(lifecycle|pipe|stdin):/.test(s.name);
