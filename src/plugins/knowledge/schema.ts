import type { Kysely } from 'kysely';
import type { PluginTables, PluginTx } from '../../contract/plugin.ts';

/** A finding: what an agent (or operator) learned, kept for the sessions that come after. */
export interface FindingsTable {
  /** Row number: the full-text index's key (FTS5 rowid; PostgreSQL identity). */
  n?: number;
  id: string;
  zone: string;
  title: string;
  body: string;
  /** Its tags joined by spaces: indexed for search (knowledge_finding_tags filters exactly). */
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

/** The knowledge plugin's own tables: all it reads and writes directly. */
export interface KnowledgeDb {
  knowledge_findings: FindingsTable;
  knowledge_finding_tags: FindingTagsTable;
  knowledge_workpads: WorkpadsTable;
}

/** The plugin's handle on its tables. */
export type Tables = PluginTables<KnowledgeDb>;
/** A write unit, as the plugin sees it. */
export type Tx = PluginTx<KnowledgeDb>;
/** Reads of its tables: `tables.reader`, or a unit's `tx.db`. */
export type Db = Kysely<KnowledgeDb>;
