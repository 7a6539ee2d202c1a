/**
 * The server's table of Streamable HTTP MCP sessions, on its own: an initialize still under way
 * when the server's close began (its auth or its SDK import still pending) makes its session
 * after `closeAll`. Kept, nobody would close it; it must not be kept, so the handler's own
 * cleanup (which closes a transport the table does not hold) ends it.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { it } from 'node:test';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpSessions } from '../../src/surfaces/http/mcp-sessions.ts';

const transport = (id: string) => new StreamableHTTPServerTransport({ sessionIdGenerator: () => id });

it('a session made after the close began is not kept', async () => {
  const sessions = new McpSessions(60_000);
  const before = transport('before');
  let closedBefore = false;
  before.onclose = () => {
    closedBefore = true;
  };
  sessions.add('before', { transport: before, owner: 'z/op' }, new EventEmitter());
  await sessions.closeAll();
  assert.ok(closedBefore, 'closeAll closes the sessions it holds');

  const late = transport('late');
  sessions.add('late', { transport: late, owner: 'z/op' }, new EventEmitter());
  assert.equal(sessions.get('late'), undefined);
  assert.equal(sessions.size, 0);
  assert.equal(sessions.held('z/op'), 0);
});

it('before the close, an added session is kept until removed', () => {
  const sessions = new McpSessions(60_000);
  sessions.add('a', { transport: transport('a'), owner: 'z/op' }, new EventEmitter());
  assert.equal(sessions.get('a')?.owner, 'z/op');
  assert.equal(sessions.held('z/op'), 1);
  sessions.remove('a');
  assert.equal(sessions.size, 0);
});
