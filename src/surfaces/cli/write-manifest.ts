/**
 * Build step (`npm run build`, after tsc): writes dist/surfaces/cli/manifest.json from the
 * syscall table, for client commands to read instead of loading zod (see manifest.ts).
 */
import { writeFileSync } from 'node:fs';
import { allSyscalls } from '../../syscalls/table.ts';
import { syscallSpecs } from './manifest.ts';

// From the sources it would write into src/, where nothing would ever refresh it.
if (import.meta.url.endsWith('.ts')) throw new Error('run the built write-manifest.js (npm run build)');
writeFileSync(new URL('./manifest.json', import.meta.url), `${JSON.stringify(syscallSpecs(allSyscalls))}\n`);
