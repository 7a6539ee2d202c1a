import type { PluginTables, PluginTx } from '../../contract/plugin.ts';

/**
 * The coordinator's tables. An agent session is a warren session (the kernel's); its row in
 * `coordinator_agents` is the extension, keyed by the session id, holding what Caracal adds.
 */

export const AGENT_STATUSES = ['active', 'suspended', 'terminated'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export interface CoordAgentsTable {
  /** The warren session id. */
  session_id: string;
  zone: string;
  application_id: string;
  /** The parent user session (Caracal's `session_sid`), opaque to warren. */
  session_sid: string | null;
  /** The agent it was spawned under (Caracal's hierarchy); null for a root agent. */
  parent_id: string | null;
  status: AgentStatus;
  depth: number;
  /** JSON array of strings. */
  capabilities: string;
  ttl_seconds: number | null;
  /** The Idempotency-Key it was created with, and a hash of the request body. */
  idempotency_key: string | null;
  request_hash: string | null;
  spawned_at: number;
  suspended_at: number | null;
  terminated_at: number | null;
  created_at: number;
  updated_at: number;
}

export const OUTBOX_STATUSES = ['pending', 'delivered', 'dead'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

export interface CoordOutboxTable {
  /** The stable event id consumers dedupe on. */
  id: string;
  zone: string;
  /** Where it goes: a Redis stream / NATS subject name (`caracal.sessions.revoke`). */
  topic: string;
  /** Events of one key are delivered in order (a session id, an edge id). */
  key: string;
  type: string;
  /** JSON. */
  payload: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

export const HEALTH = ['starting', 'healthy', 'degraded', 'unhealthy'] as const;
export type Health = (typeof HEALTH)[number];

export interface CoordServicesTable {
  id: string;
  zone: string;
  /** The agent session that serves it (invocations are delivered to it). */
  agent_id: string;
  application_id: string;
  endpoint_url: string;
  /** JSON arrays of strings. */
  protocol_versions: string;
  framework_name: string | null;
  framework_version: string | null;
  capabilities: string;
  health: Health;
  /** 1 while the health watcher holds it unhealthy for silence (the next heartbeat recovers it). */
  silent: number;
  /** JSON object. */
  metadata: string;
  last_heartbeat_at: number | null;
  created_at: number;
  updated_at: number;
}

export const INVOCATION_STATUSES = [
  'pending',
  'running',
  'succeeded',
  'failed',
  'timed_out',
  'canceled',
  'dead',
] as const;
export type InvocationStatus = (typeof INVOCATION_STATUSES)[number];

export interface CoordInvocationsTable {
  id: string;
  zone: string;
  service_id: string;
  source_session_id: string | null;
  target_session_id: string;
  idempotency_key: string;
  method: string;
  /** JSON. */
  params: string;
  status: InvocationStatus;
  attempts: number;
  max_attempts: number;
  timeout_ms: number | null;
  /** JSON RetryPolicy, or null (one attempt). */
  retry_policy: string | null;
  /** JSON of the last failure, and of the result. */
  error: string | null;
  result: string | null;
  deadline_at: number | null;
  /** When a pending invocation may be (re)delivered: its backoff. */
  next_attempt_at: number;
  started_at: number | null;
  completed_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface CoordDelegationsTable {
  id: string;
  zone: string;
  source_agent_id: string;
  target_agent_id: string;
  /** The edge the source's own authority came from (what this one narrows); null: a root edge. */
  parent_edge_id: string | null;
  /** JSON { resources?, scopes?, expires_at? }. */
  constraints: string;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
}

/** The coordinator's tables, and only those: what `ctx.tables` reads and writes. */
export interface CoordinatorDb {
  coordinator_agents: CoordAgentsTable;
  coordinator_outbox: CoordOutboxTable;
  coordinator_services: CoordServicesTable;
  coordinator_invocations: CoordInvocationsTable;
  coordinator_delegations: CoordDelegationsTable;
}

/** The coordinator's handle on its tables (`ctx.tables`), and a write unit over them. */
export type CoordinatorTables = PluginTables<CoordinatorDb>;
export type CoordinatorTx = PluginTx<CoordinatorDb>;
