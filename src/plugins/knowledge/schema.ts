import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../store/schema.ts';
import type { OrchestrationDb } from '../orchestration/schema.ts';

/** A finding: what an agent (or operator) learned, kept for the sessions that come after. */
export interface FindingsTable {
  /** Row number: the full-text index's key (FTS5 rowid; PostgreSQL identity). */
  n?: number;
  id: string;
  zone: string;
  title: string;
  body: string;
  /** Its tags joined by spaces: indexed for search (finding_tags filters exactly). */
  tags: string;
  /** The task and session it came from (null for an operator's finding outside a task). */
  task_id: string | null;
  session_id: string | null;
  created_by: string;
  created_at: number;
}

export interface FindingTagsTable {
  finding_id: string;
  zone: string;
  tag: string;
}

/** A task's workpad: one durable scratch document, versioned for optimistic writes. */
export interface WorkpadsTable {
  task_id: string;
  zone: string;
  body: string;
  version: number;
  updated_by: string;
  updated_at: number;
}

export interface KnowledgeDb extends OrchestrationDb {
  findings: FindingsTable;
  finding_tags: FindingTagsTable;
  workpads: WorkpadsTable;
}

/** The kernel's handles, typed with this plugin's tables (and orchestration's) as well. */
export const kdb = (db: Kysely<Database> | Transaction<Database>): Kysely<KnowledgeDb> =>
  db as unknown as Kysely<KnowledgeDb>;
