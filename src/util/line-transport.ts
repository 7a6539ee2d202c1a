import type { Socket } from 'node:net';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { errorLine } from './error-line.ts';
import { refuseConnection } from './refuse-connection.ts';

/** Pieces smaller than this are copied into blocks of this size. */
const BLOCK = 4096;

/** JSON-RPC's "Invalid Request". */
const INVALID_REQUEST = -32600;

const tooLong = (max: number) => `a line longer than ${max} bytes: connection closed`;

/**
 * MCP over one socket connection, a message per line (as stdio). Replaces the SDK's stdio
 * transport there, whose buffer concatenated every chunk onto the whole unterminated line
 * and searched it again for a newline: 100 peers writing 10 MB without one took the server
 * to 2 GB and held its event loop for seconds. Here only new bytes are searched, the pieces of
 * a line are kept as they came and joined once, when its newline arrives (small pieces are
 * copied into 4 KiB blocks as they come, so a line is never thousands of tiny buffers), and a line longer than
 * `maxLineBytes` closes the connection after an error line saying so: its bytes are dropped
 * at the cap and the rest is never read (refuse-connection.ts). While the peer does not
 * read what it is sent, the connection is not read either.
 */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The line so far: pieces as they came, small ones gathered into `block`. */
  private pieces: Buffer[] = [];
  private block: Buffer | undefined;
  private blockLength = 0;
  private length = 0;
  private started = false;
  private closed = false;

  constructor(
    private readonly conn: Socket,
    private readonly maxLineBytes: number,
  ) {}

  /** Start reading; again (the MCP server's connect, after the first message) is a no-op. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.conn.on('data', this.onData);
    this.conn.on('close', this.onClose);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || this.conn.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.conn.write(serializeMessage(message))) return resolve();
      // The peer is not reading: stop taking its requests until it has.
      this.conn.pause();
      this.conn.once('drain', () => {
        this.conn.resume();
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.conn.off('data', this.onData);
    this.pieces = [];
    this.block = undefined;
    this.conn.destroy();
    this.onclose?.();
  }

  /** Bytes this connection holds for its unfinished line (its pieces and the open block): never past the cap plus a block. */
  get heldBytes(): number {
    return this.pieces.reduce((n, p) => n + p.length, 0) + (this.block?.length ?? 0);
  }

  private readonly onClose = () => void this.close();

  private readonly onData = (chunk: Buffer) => {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0 && !this.closed; nl = chunk.indexOf(0x0a, from)) {
      let text: string;
      if (this.length === 0) {
        // The whole line is in this chunk (the usual request): read it from there, no copy.
        if (nl - from > this.maxLineBytes) return this.refuse(tooLong(this.maxLineBytes));
        text = chunk.toString('utf8', from, nl);
      } else {
        if (!this.gather(chunk.subarray(from, nl))) return;
        this.endBlock();
        text = Buffer.concat(this.pieces, this.length).toString('utf8');
        this.pieces = [];
        this.length = 0;
      }
      from = nl + 1;
      this.deliver(text.charCodeAt(text.length - 1) === 0x0d ? text.slice(0, -1) : text);
    }
    if (!this.closed && from < chunk.length) this.gather(chunk.subarray(from));
  };

  /** Add to the line being read; false (and the connection closing) when it would pass the cap. */
  private gather(bytes: Buffer): boolean {
    if (this.length + bytes.length > this.maxLineBytes) {
      this.refuse(tooLong(this.maxLineBytes));
      return false;
    }
    this.length += bytes.length;
    if (bytes.length >= BLOCK) {
      this.endBlock();
      this.pieces.push(bytes);
      return true;
    }
    if (!this.block || this.blockLength + bytes.length > BLOCK) {
      this.endBlock();
      this.block = Buffer.allocUnsafe(BLOCK);
    }
    bytes.copy(this.block, this.blockLength);
    this.blockLength += bytes.length;
    return true;
  }

  private endBlock(): void {
    if (this.block && this.blockLength > 0) this.pieces.push(this.block.subarray(0, this.blockLength));
    this.block = undefined;
    this.blockLength = 0;
  }

  private deliver(text: string): void {
    if (text === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch (error) {
      // As the stdio transport: a line that is not JSON-RPC is reported and passed over.
      this.onerror?.(error as Error);
      return;
    }
    this.onmessage?.(message);
  }

  /** Say why and close; nothing more of the peer is read (refuse-connection.ts). */
  private refuse(why: string): void {
    this.conn.off('data', this.onData);
    this.pieces = [];
    this.block = undefined;
    this.length = 0;
    refuseConnection(this.conn, errorLine(INVALID_REQUEST, why));
  }
}
