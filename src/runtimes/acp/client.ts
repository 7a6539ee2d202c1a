import type { ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import {
  type AnyMessage,
  type ClientConnection,
  client,
  ndJsonStream,
  RequestError,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
} from '@agentclientprotocol/sdk';
import type { AgentSink } from '../types.ts';
import type { PermissionPolicy } from './config.ts';
import { type ConfinedFiles, FileRefused } from './files.ts';
import { describe, fire, tap } from './stream.ts';
import type { UpdateLog } from './updates.ts';

/** What warren serves as the ACP client: permission answers by policy, and confined file access. */
export interface ClientSide {
  sink: AgentSink;
  files: ConfinedFiles;
  updates: UpdateLog;
  policy: PermissionPolicy;
  /** The session is being stopped: every permission request is cancelled. */
  stopping(): boolean;
  /** Sees every incoming message, in order, before the SDK dispatches it. */
  observe(m: AnyMessage): void;
}

/** The ACP connection over the agent's stdin/stdout. */
export function connectClient(child: ChildProcess, side: ClientSide): ClientConnection {
  const stream = tap(
    ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>,
    ),
    side.observe,
  );
  const { sink, files, updates } = side;
  return client({ name: 'warren' })
    .onRequest('session/request_permission', ({ params }) => permission(side, params))
    .onRequest('fs/read_text_file', async ({ params }) => {
      updates.flushText();
      try {
        const content = await files.read(params.path, params.line, params.limit);
        fire(sink.event('fs', { op: 'read', path: params.path, ok: true }));
        return { content };
      } catch (error) {
        throw fsError(sink, 'read', params.path, error);
      }
    })
    .onRequest('fs/write_text_file', async ({ params }) => {
      updates.flushText();
      try {
        await files.write(params.path, params.content);
        fire(sink.event('fs', { op: 'write', path: params.path, ok: true, bytes: params.content.length }));
        return {};
      } catch (error) {
        throw fsError(sink, 'write', params.path, error);
      }
    })
    .connect(stream);
}

function permission(side: ClientSide, params: RequestPermissionRequest): RequestPermissionResponse {
  const { updates, policy } = side;
  updates.flushText();
  const stopping = side.stopping();
  const tc = params.toolCall;
  const title = tc.title ?? updates.tools.get(tc.toolCallId)?.title ?? '';
  const kinds: string[] =
    policy === 'allow' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
  const option = stopping
    ? undefined
    : kinds.map((k) => params.options.find((o) => o.kind === k)).find((o) => o !== undefined);
  const decision = stopping ? 'cancelled' : policy === 'allow' && option ? 'allowed' : 'denied';
  fire(
    side.sink.event('permission', {
      toolCallId: tc.toolCallId,
      title,
      kind: tc.kind ?? updates.tools.get(tc.toolCallId)?.kind ?? null,
      decision,
      policy,
      ...(option ? { optionId: option.optionId, optionKind: option.kind } : {}),
      options: params.options.map((o) => o.kind),
    }),
  );
  if (!option) return { outcome: { outcome: 'cancelled' } };
  return { outcome: { outcome: 'selected', optionId: option.optionId } };
}

function fsError(sink: AgentSink, op: 'read' | 'write', path: string, error: unknown): RequestError {
  const message = describe(error);
  const refused = error instanceof FileRefused;
  fire(sink.event('fs', { op, path, ok: false, ...(refused ? { refused: error.why } : {}), error: message }));
  if (refused && error.why === 'missing') return RequestError.resourceNotFound(path);
  if (refused) return RequestError.invalidParams({ path }, message);
  return RequestError.internalError({ path }, message);
}
