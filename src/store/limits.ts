/**
 * SQLite: the longest a heavy read (a full-text search) runs in its worker thread before it is
 * stopped (config `limits.maxSearchMs`). Its own file: the config defaults read it without
 * loading the store.
 */
export const HEAVY_READ_MS = 10_000;
