import { demoCommand, serveCommand } from './app/serve.ts';
import { configShowCommand } from './surfaces/cli/config.ts';
import { mcpServeCommand } from './surfaces/cli/coordinator-mcp.ts';
import { runCli } from './surfaces/cli/main.ts';
import { mcpCommand } from './surfaces/cli/mcp.ts';
import { runnerCommand } from './surfaces/cli/runner.ts';
import { secretsSetCommand } from './surfaces/cli/secrets.ts';
import { setupCommand } from './surfaces/cli/setup-hermes.ts';
import { workpadEditCommand } from './surfaces/cli/workpad.ts';

/** The `warren` command. */
export function main(argv: string[]): Promise<number> {
  return runCli(argv, { stdout: process.stdout, stderr: process.stderr, env: process.env }, [
    serveCommand,
    demoCommand,
    mcpCommand,
    runnerCommand,
    mcpServeCommand,
    setupCommand,
    configShowCommand,
    secretsSetCommand,
    workpadEditCommand,
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
