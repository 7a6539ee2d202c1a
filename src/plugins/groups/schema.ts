/** A group: a folder in the tree, the agent it runs, its grant rules and its live session. */
export interface GroupsTable {
  folder: string;
  zone: string;
  name: string;
  /** The spawn request of its agent (JSON), or null to inherit the nearest ancestor's. */
  agent: string | null;
  /** Grant rules (JSON array of `allow:<glob>` / `deny:<glob>`). */
  rules: string;
  /** Its agent's current session, or null (none yet, or cleared). */
  session_id: string | null;
  /** The chat of the last message delivered to it (JSON: platform, room, chat_jid, sender), for send_reply. */
  last_chat: string | null;
  created_by: string;
  created_at: number;
  updated_at: number;
}

export interface GroupRoutesTable {
  id: string;
  zone: string;
  seq: number;
  /** The canonical match expression. */
  match: string;
  target: string;
  created_by: string;
  created_at: number;
}

/** Inbound messages no route matched (or whose target could not take them). */
export interface GroupUnroutedTable {
  id: string;
  zone: string;
  platform: string;
  room: string;
  chat_jid: string;
  sender: string;
  verb: string;
  text: string;
  attachments: string;
  reason: string;
  received_at: number;
}

/** The groups plugin's tables. */
export interface GroupsDb {
  groups: GroupsTable;
  groups_routes: GroupRoutesTable;
  groups_unrouted: GroupUnroutedTable;
}
