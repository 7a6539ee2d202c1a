import type { Syscall } from '../../../contract/syscall.ts';
import { inbound, unrouted } from './inbound.ts';
import { getGroups, refreshGroups, registerGroup, setGroupRules, spawnGroup } from './manage.ts';
import { sendDocument, sendMessage, sendReply } from './messaging.ts';
import { addRouteSyscall, deleteRouteSyscall, listRoutes, setRoutesSyscall } from './routing.ts';
import { clearSession, delegateToChild, delegateToParent, injectMessage } from './sessions.ts';

/** The groups plugin's syscalls: seed 002's group tools (less the scheduler's, which are the scheduling plugin's) and the operator's. */
export const groupSyscalls: readonly Syscall[] = [
  sendMessage,
  sendReply,
  sendDocument,
  clearSession,
  injectMessage,
  registerGroup,
  getGroups,
  refreshGroups,
  delegateToChild,
  delegateToParent,
  spawnGroup,
  listRoutes,
  setRoutesSyscall,
  addRouteSyscall,
  deleteRouteSyscall,
  setGroupRules,
  inbound,
  unrouted,
];
