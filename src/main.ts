import { configShowCommand } from './surfaces/cli/config.ts';
import { runCli } from './surfaces/cli/main.ts';
import { mcpCommand } from './surfaces/cli/mcp.ts';
import { secretsSetCommand } from './surfaces/cli/secrets.ts';
import { demoCommand, serveCommand } from './surfaces/cli/serve.ts';

/** The `warren` command. */
export function main(argv: string[]): Promise<number> {
  return runCli(argv, { stdout: process.stdout, stderr: process.stderr, env: process.env }, [
    serveCommand,
    demoCommand,
    mcpCommand,
    configShowCommand,
    secretsSetCommand,
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
