import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import { defineSyscall } from '../../../contract/syscall.ts';
import { within } from '../../../kernel/grants.ts';
import { invalid } from '../../../vocab/errors.ts';
import { actorOf, needGroup } from '../actor.ts';
import { groupIn } from '../registry.ts';
import { actingGroup, groups, text } from './common.ts';

/**
 * Outbound messages: a group's words to a chat, recorded as `group.sent` in the log, which
 * channel adapters follow (`warren events --type group.sent`). Warren speaks no chat
 * protocol itself.
 */
const sent = z.object({ seq: z.number().describe('The log seq of the group.sent event') });

export const sendMessage = defineSyscall({
  name: 'send_message',
  group: 'groups',
  summary: 'Send a message to a chat, as your group',
  input: z.object({
    chat_jid: z.string().min(1).max(300).describe('The chat to send to'),
    platform: z.string().min(1).max(64).optional().describe('Its platform (default: that of your last chat)'),
    text,
    ...actingGroup,
  }),
  output: sent,
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups/send' },
  cli: {
    command: ['group', 'send'],
    positional: ['chat_jid', 'text'],
    examples: ['warren group send tg:-5075 "hello" --group main'],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const folder = needGroup(a, 'send_message');
    const row = await groupIn(groups(ctx).tables.reader, a.zone, folder);
    const last = row.last_chat ? (JSON.parse(row.last_chat) as { platform: string }) : null;
    const platform = i.platform ?? last?.platform ?? null;
    const r = await groups(ctx).tables.write(async (tx) =>
      tx.append({
        zone: a.zone,
        type: 'group.sent',
        actor: a.id,
        payload: { folder, kind: 'message', platform, chat_jid: i.chat_jid, text: i.text },
      }),
    );
    return { seq: r.seq };
  },
});

export const sendReply = defineSyscall({
  name: 'send_reply',
  group: 'groups',
  summary: 'Reply in the chat your group last heard from',
  input: z.object({ text, ...actingGroup }),
  output: sent.extend({ chat_jid: z.string() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups/reply' },
  cli: {
    command: ['group', 'reply'],
    positional: ['text'],
    examples: ['warren group reply "on it" --group main/research'],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const folder = needGroup(a, 'send_reply');
    const row = await groupIn(groups(ctx).tables.reader, a.zone, folder);
    if (!row.last_chat)
      throw invalid(`send_reply: group ${folder} has had no message to reply to (use send_message)`);
    const chat = JSON.parse(row.last_chat) as { platform: string; chat_jid: string; room: string };
    const to = chat.chat_jid || chat.room;
    const r = await groups(ctx).tables.write(async (tx) =>
      tx.append({
        zone: a.zone,
        type: 'group.sent',
        actor: a.id,
        payload: { folder, kind: 'reply', platform: chat.platform, chat_jid: to, text: i.text },
      }),
    );
    return { seq: r.seq, chat_jid: to };
  },
});

/** A file a group may send: a regular file under its folder, symlinks resolved, within the size cap. */
export function groupFile(
  dir: string,
  path: string,
  maxBytes: number,
): { real: string; rel: string; bytes: number } {
  if (isAbsolute(path) || path.split(/[\\/]/).includes('..')) {
    throw invalid('send_document: give a path relative to your group folder, without ..', { field: 'path' });
  }
  let root: string;
  let real: string;
  try {
    root = realpathSync(dir);
    real = realpathSync(resolve(root, path));
  } catch {
    throw invalid(
      `send_document: ${JSON.stringify(path.slice(0, 200))} does not exist in your group folder`,
      { field: 'path' },
    );
  }
  if (!within(real, root) || real === root) {
    throw invalid('send_document: the path leads outside your group folder', { field: 'path' });
  }
  const st = statSync(real);
  if (!st.isFile()) throw invalid('send_document: not a regular file', { field: 'path' });
  if (st.size > maxBytes) {
    throw invalid(`send_document: the file is ${st.size} bytes, over the cap of ${maxBytes}`, {
      field: 'path',
      maxBytes,
    });
  }
  return { real, rel: relative(root, real), bytes: st.size };
}

export const sendDocument = defineSyscall({
  name: 'send_document',
  group: 'groups',
  summary: 'Send a file from your group folder to a chat (default: your last chat)',
  input: z.object({
    path: z.string().min(1).max(1000).describe('A file, relative to your group folder'),
    chat_jid: z
      .string()
      .min(1)
      .max(300)
      .optional()
      .describe('The chat (default: the one you last heard from)'),
    caption: z.string().max(4000).optional().describe('Text shown with the document'),
    ...actingGroup,
  }),
  output: sent.extend({ path: z.string(), bytes: z.number(), sha256: z.string(), chat_jid: z.string() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/groups/document' },
  cli: {
    command: ['group', 'document'],
    positional: ['path'],
    examples: ['warren group document out/report.pdf --group main'],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const folder = needGroup(a, 'send_document');
    const row = await groupIn(groups(ctx).tables.reader, a.zone, folder);
    const chat = row.last_chat
      ? (JSON.parse(row.last_chat) as { platform: string; chat_jid: string; room: string })
      : null;
    const to = i.chat_jid ?? (chat ? chat.chat_jid || chat.room : null);
    if (!to)
      throw invalid('send_document: name chat_jid (your group has heard from no chat yet)', {
        field: 'chat_jid',
      });
    const g = groups(ctx);
    const f = groupFile(g.agents.dirOf(folder), i.path, g.maxDocumentBytes);
    const sha256 = createHash('sha256').update(readFileSync(f.real)).digest('hex');
    const r = await groups(ctx).tables.write(async (tx) =>
      tx.append({
        zone: a.zone,
        type: 'group.sent',
        actor: a.id,
        payload: {
          folder,
          kind: 'document',
          platform: chat?.platform ?? null,
          chat_jid: to,
          document: { path: f.rel, bytes: f.bytes, sha256 },
          ...(i.caption !== undefined ? { caption: i.caption } : {}),
        },
      }),
    );
    return { seq: r.seq, path: f.rel, bytes: f.bytes, sha256, chat_jid: to };
  },
});
