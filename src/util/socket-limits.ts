/** What one MCP unix socket takes from its peers (config `sockets.*`; unix-mcp.ts applies it). */
export interface UnixSocketLimits {
  /** A longer line closes its connection (after an error line). */
  maxLineBytes: number;
  /** Connections open at once per socket; one more is refused (after an error line). */
  maxConnections: number;
}

export const UNIX_SOCKET_DEFAULTS: UnixSocketLimits = { maxLineBytes: 1024 * 1024, maxConnections: 64 };
