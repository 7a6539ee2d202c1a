import { it } from 'node:test';
import { assertRowsBoundedAfterCycles } from '../helpers/cycles.ts';
import { forEachWarren } from '../helpers/warrens.ts';

/**
 * The issue's own number: 10,000 spawn/stop cycles, in a file of its own (its own time budget).
 * SQLite only; PostgreSQL runs the same test with 500 cycles in retire.test.ts.
 */
forEachWarren(
  'retire at scale',
  (t) => {
    // ~75-90 s alone on 2 cores, longer beside another file: a bound of its own.
    it(
      '10,000 spawn/stop cycles leave the row counts bounded once retention has run',
      { timeout: 400_000 },
      () => assertRowsBoundedAfterCycles(t, Number(process.env.WARREN_TEST_CYCLES ?? 10_000)),
    );
  },
  ['sqlite'],
);
