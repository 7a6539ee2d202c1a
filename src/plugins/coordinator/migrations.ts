import type { Kysely, Migration } from 'kysely';
import type { DialectKind } from '../../store/dialect.ts';
import { renameOld } from '../../store/renames.ts';

/**
 * The coordinator's tables: the agent-session extension, the transactional outbox, services,
 * invocations and delegations. 001 and 002 make them under their current names
 * (`coordinator_…`; indexes keep the `coord_…` names they always had); a database made before
 * `003_plugin_prefix` holds some or all of them as `coord_…`, and 003 renames those there.
 */
export function coordinatorMigrations(kind: DialectKind): Record<string, Migration> {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    '001_agents_outbox': {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable('coordinator_agents')
          .addColumn('session_id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('application_id', 'text', (c) => c.notNull())
          .addColumn('session_sid', 'text')
          .addColumn('parent_id', 'text')
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('depth', 'integer', (c) => c.notNull())
          .addColumn('capabilities', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('ttl_seconds', 'integer')
          .addColumn('idempotency_key', 'text')
          .addColumn('request_hash', 'text')
          .addColumn('spawned_at', big, (c) => c.notNull())
          .addColumn('suspended_at', big)
          .addColumn('terminated_at', big)
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('updated_at', big, (c) => c.notNull())
          .execute();
        // Limits count live agents per zone, application and parent; listings page by id.
        await db.schema
          .createIndex('coord_agents_zone_app')
          .on('coordinator_agents')
          .columns(['zone', 'application_id', 'status'])
          .execute();
        await db.schema
          .createIndex('coord_agents_zone_status')
          .on('coordinator_agents')
          .columns(['zone', 'status'])
          .execute();
        await db.schema
          .createIndex('coord_agents_parent')
          .on('coordinator_agents')
          .column('parent_id')
          .execute();
        await db.schema
          .createIndex('coord_agents_zone_id')
          .on('coordinator_agents')
          .columns(['zone', 'session_id'])
          .execute();
        // One creation per key in a zone, whatever the callers (the database says so too).
        await db.schema
          .createIndex('coord_agents_idem')
          .on('coordinator_agents')
          .columns(['zone', 'idempotency_key'])
          .unique()
          .execute();
        await db.schema
          .createTable('coordinator_outbox')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('topic', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('payload', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('next_attempt_at', big, (c) => c.notNull())
          .addColumn('last_error', 'text')
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('delivered_at', big)
          .execute();
        // The publisher reads pending rows oldest first; retention drops old delivered ones.
        await db.schema
          .createIndex('coord_outbox_status')
          .on('coordinator_outbox')
          .columns(['status', 'created_at', 'id'])
          .execute();
      },
    },
    '002_services_invocations_delegations': {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable('coordinator_services')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('agent_id', 'text', (c) => c.notNull())
          .addColumn('application_id', 'text', (c) => c.notNull())
          .addColumn('endpoint_url', 'text', (c) => c.notNull())
          .addColumn('protocol_versions', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('framework_name', 'text')
          .addColumn('framework_version', 'text')
          .addColumn('capabilities', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('health', 'text', (c) => c.notNull())
          .addColumn('silent', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
          .addColumn('last_heartbeat_at', big)
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('updated_at', big, (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('coord_services_endpoint')
          .on('coordinator_services')
          .columns(['zone', 'application_id', 'endpoint_url'])
          .unique()
          .execute();
        await db.schema
          .createIndex('coord_services_agent')
          .on('coordinator_services')
          .columns(['zone', 'agent_id'])
          .execute();
        await db.schema
          .createIndex('coord_services_heartbeat')
          .on('coordinator_services')
          .columns(['silent', 'last_heartbeat_at'])
          .execute();
        await db.schema
          .createTable('coordinator_invocations')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('service_id', 'text', (c) => c.notNull())
          .addColumn('source_session_id', 'text')
          .addColumn('target_session_id', 'text', (c) => c.notNull())
          .addColumn('idempotency_key', 'text', (c) => c.notNull())
          .addColumn('method', 'text', (c) => c.notNull())
          .addColumn('params', 'text', (c) => c.notNull().defaultTo('{}'))
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('max_attempts', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('timeout_ms', big)
          .addColumn('retry_policy', 'text')
          .addColumn('error', 'text')
          .addColumn('result', 'text')
          .addColumn('deadline_at', big)
          .addColumn('next_attempt_at', big, (c) => c.notNull())
          .addColumn('started_at', big)
          .addColumn('completed_at', big)
          .addColumn('created_at', big, (c) => c.notNull())
          .addColumn('updated_at', big, (c) => c.notNull())
          .execute();
        // A duplicate enqueue finds the first (the database refuses a second row).
        await db.schema
          .createIndex('coord_invocations_idem')
          .on('coordinator_invocations')
          .columns(['zone', 'service_id', 'idempotency_key'])
          .unique()
          .execute();
        await db.schema
          .createIndex('coord_invocations_status')
          .on('coordinator_invocations')
          .columns(['status', 'next_attempt_at'])
          .execute();
        await db.schema
          .createIndex('coord_invocations_deadline')
          .on('coordinator_invocations')
          .columns(['status', 'deadline_at'])
          .execute();
        await db.schema
          .createIndex('coord_invocations_target')
          .on('coordinator_invocations')
          .columns(['target_session_id', 'status'])
          .execute();
        await db.schema
          .createTable('coordinator_delegations')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('source_agent_id', 'text', (c) => c.notNull())
          .addColumn('target_agent_id', 'text', (c) => c.notNull())
          .addColumn('parent_edge_id', 'text')
          .addColumn('constraints', 'text', (c) => c.notNull().defaultTo('{}'))
          .addColumn('expires_at', big)
          .addColumn('revoked_at', big)
          .addColumn('created_at', big, (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('coord_delegations_target')
          .on('coordinator_delegations')
          .columns(['zone', 'target_agent_id'])
          .execute();
        await db.schema
          .createIndex('coord_delegations_parent')
          .on('coordinator_delegations')
          .column('parent_edge_id')
          .execute();
        await db.schema
          .createIndex('coord_delegations_created')
          .on('coordinator_delegations')
          .column('created_at')
          .execute();
      },
    },
    // Tables are named for their plugin (`coordinator_…`). Renamed in place, rows and indexes
    // kept (no migration or query names an index, so theirs stay as created).
    '003_plugin_prefix': {
      async up(db: Kysely<unknown>): Promise<void> {
        await renameOld(
          db,
          kind,
          ['agents', 'outbox', 'services', 'invocations', 'delegations'].map(
            (name) => [`coord_${name}`, `coordinator_${name}`] as const,
          ),
        );
      },
    },
  };
}
