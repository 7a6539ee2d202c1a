import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
  McpError,
  type Prompt,
} from '@modelcontextprotocol/sdk/types.js';
import type { PromptSource } from '../../contract/resources.ts';
import type { Warren } from '../../syscalls/warren.ts';
import type { Principal } from '../../vocab/principal.ts';
import { asMcpError } from './resources.ts';

/** Longest argument value a prompt takes (a goal is prose; ids and names are short). */
const MAX_ARG = 16 * 1024;

const toPrompt = (d: PromptSource): Prompt => ({
  name: d.name,
  title: d.title,
  description: d.description,
  arguments: d.arguments.map(({ complete: _, ...a }) => a),
});

/**
 * `prompts/list` and `prompts/get` for one connection: the loaded plugins' prompts (the core
 * plugin's teach warren's model: fds, pipes, SIGCHLD, reaping), each offered by the door only
 * to callers that may call the tools it tells them to use.
 */
export function registerPrompts(server: Server, warren: Warren, principal: Principal): void {
  const door = warren.contributions;
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: (await door.prompts(principal)).map(toPrompt),
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (req): Promise<GetPromptResult> => {
    const { name, arguments: given = {} } = req.params;
    const def = (await door.prompts(principal)).find((d) => d.name === name);
    if (!def) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    const args: Record<string, string> = {};
    for (const a of def.arguments) {
      const v = given[a.name];
      if (v === undefined || v === '') {
        if (a.required) throw new McpError(ErrorCode.InvalidParams, `Missing required argument: ${a.name}`);
        continue;
      }
      if (v.length > MAX_ARG)
        throw new McpError(
          ErrorCode.InvalidParams,
          `Argument ${a.name} is longer than ${MAX_ARG} characters`,
        );
      args[a.name] = v;
    }
    try {
      const rendered = await door.render(principal, name, args);
      if (!rendered) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
      return { description: def.description, messages: rendered.messages };
    } catch (error) {
      throw asMcpError(error, { prompt: name });
    }
  });
}
