import type { Migration, MigrationProvider } from 'kysely';
import type { DialectKind } from '../dialect.ts';
import { initial } from './001_initial.ts';
import { sessionTools } from './002_session_tools.ts';
import { lookupIndexes } from './003_lookup_indexes.ts';
import { tokenGeneration } from './005_token_generation.ts';

/** Versioned migrations, in order. Append; never edit one that has shipped. */
export function migrations(kind: DialectKind): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return {
        '001_initial': initial(kind),
        '002_session_tools': sessionTools,
        '003_lookup_indexes': lookupIndexes,
        '005_token_generation': tokenGeneration,
      };
    },
  };
}
