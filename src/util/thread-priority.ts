/**
 * A worker thread that runs untrusted work (a caller's regular expression, a caller's
 * full-text search) gives way to the server's own thread for the CPU. On a 2-core machine a
 * busy worker and the event loop share a core whenever anything else runs (an agent, the
 * database, another process), and the loop then waits its turn like any thread. Linux keeps a
 * nice value per thread, and a thread may lower its own priority without privilege: the worker
 * does so as it starts, by `UNTRUSTED_NICE_STEPS` below the thread that made it (CFS then gives
 * it about a tenth of a shared core). Elsewhere (no `/proc/thread-self`) it runs as before.
 */
export const UNTRUSTED_NICE_STEPS = 10;

/** The first lines of an eval worker's source (CommonJS) that lower its own thread's priority. */
export const LOWER_OWN_PRIORITY = `
try {
  const os = require('node:os');
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  os.setPriority(tid, Math.min(19, os.getPriority(tid) + ${UNTRUSTED_NICE_STEPS}));
} catch {}
`;
