import type { Migration, MigrationProvider } from 'kysely';
import type { DialectKind } from '../dialect.ts';
import { initial } from './001_initial.ts';
import { sessionTools } from './002_session_tools.ts';
import { lookupIndexes } from './003_lookup_indexes.ts';
import { hotPathIndexes } from './004_hot_path_indexes.ts';
import { tokenGeneration } from './005_token_generation.ts';
import { sessionHardening } from './006_session_hardening.ts';
import { secrets } from './007_secrets.ts';
import { plugins } from './008_plugins.ts';
import { personas } from './009_personas.ts';
import { budgets } from './010_budgets.ts';
import { sessionListing } from './011_session_listing.ts';
import { uiSessions } from './012_ui_sessions.ts';
import { clusterNodes } from './013_cluster_nodes.ts';
import { sessionReporter } from './014_session_reporter.ts';

/** Versioned migrations, in order. Append; never edit one that has shipped. */
export function migrations(kind: DialectKind): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return {
        '001_initial': initial(kind),
        '002_session_tools': sessionTools,
        '003_lookup_indexes': lookupIndexes,
        '004_hot_path_indexes': hotPathIndexes,
        '005_token_generation': tokenGeneration,
        '006_session_hardening': sessionHardening(kind),
        '007_secrets': secrets(kind),
        '008_plugins': plugins(kind),
        '009_personas': personas(kind),
        '011_session_listing': sessionListing,
        '010_budgets': budgets(kind),
        '012_ui_sessions': uiSessions(kind),
        '013_cluster_nodes': clusterNodes(kind),
        '014_session_reporter': sessionReporter,
      };
    },
  };
}
