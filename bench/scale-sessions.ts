/** `npx tsx bench/scale-sessions.ts [N]`: the live-sessions half of the scale bench alone (default 10,000). */
import { scaleSessions } from './scale.ts';
import { formatRows } from './store.ts';

const top = Number(process.argv[2] ?? 10_000);
console.log(formatRows(await scaleSessions({ populations: [10, Math.min(1_000, top), top] })));
