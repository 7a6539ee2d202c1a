import { definePlugin } from '../../contract/plugin.ts';
import { KeyedQueue } from '../../util/keyed-queue.ts';
import type { OrchestrationInstance } from '../orchestration/instance.ts';
import { type KnowledgeConfig, knowledgeConfig } from './config.ts';
import { assemble } from './context.ts';
import { knowledgeMigrations } from './migrations.ts';
import type { KnowledgeDb } from './schema.ts';
import { selective } from './search.ts';
import { postgresSearch } from './search-postgres.ts';
import { sqliteSearch } from './search-sqlite.ts';
import { type KnowledgeInstance, knowledgeSyscalls } from './syscalls.ts';

/**
 * Knowledge: findings agents and operators post, found again by full-text search in the
 * database itself (FTS5 on SQLite, tsvector + GIN on PostgreSQL); a workpad per task; and
 * the start context each task session gets ahead of its first prompt. See docs/knowledge.md.
 */
export const knowledgePlugin = definePlugin<KnowledgeConfig, KnowledgeDb>({
  name: 'knowledge',
  version: '0.1.0',
  summary: 'findings and full-text search, task workpads, start context for task sessions',
  dependsOn: ['orchestration'],
  migrations: knowledgeMigrations,
  config: knowledgeConfig,
  syscalls: knowledgeSyscalls,
  start({ tables, config, plugin }): KnowledgeInstance {
    const search = selective(tables.kind === 'postgres' ? postgresSearch : sqliteSearch);
    // What it needs to know of tasks, orchestration answers: it never reads orchestration's tables.
    const tasks = plugin<OrchestrationInstance>('orchestration').tasks;
    return {
      config,
      search,
      tables,
      tasks,
      lanes: new KeyedQueue(),
      startContext: (task) => assemble(tables, tasks, search, config, task),
    };
  },
});
