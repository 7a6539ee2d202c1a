import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { syscallTable } from '../../syscalls/table.ts';
import { withMcpTools } from './mcp-tools.ts';
import { renderReference } from './reference.ts';

export const REFERENCE_PATH = fileURLToPath(new URL('../../../docs/reference.md', import.meta.url));
export const MCP_DOC_PATH = fileURLToPath(new URL('../../../docs/mcp.md', import.meta.url));

// `npm run docs` writes both; `npm run docs:mcp` (`--mcp`) only docs/mcp.md's generated part.
if (import.meta.url === `file://${process.argv[1]}`) {
  if (!process.argv.includes('--mcp')) {
    writeFileSync(REFERENCE_PATH, renderReference(syscallTable()));
    console.log(`wrote ${REFERENCE_PATH}`);
  }
  writeFileSync(MCP_DOC_PATH, withMcpTools(readFileSync(MCP_DOC_PATH, 'utf8'), syscallTable()));
  console.log(`wrote ${MCP_DOC_PATH}`);
}
