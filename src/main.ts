import { runCli } from './surfaces/cli/main.ts';
import { serveCommand } from './surfaces/cli/serve.ts';

/** The `warren` command. */
export async function main(argv: string[]): Promise<number> {
  const io = { stdout: process.stdout, stderr: process.stderr, env: process.env };
  // `npm start` runs `warren demo`: serve with the bundled demo.
  if (argv[0] === 'demo') return serveCommand.run(['--demo', ...argv.slice(1)], io);
  return runCli(argv, io, [serveCommand]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
