import assert from 'node:assert/strict';
import { it } from 'node:test';
import { allSyscalls } from '../../src/syscalls/table.ts';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { everyTool, forEachWarren, waitStatus } from '../helpers/warrens.ts';

/**
 * One read scope per object (issue 25): `agent_get` returned a sibling's coordinator record
 * while `session_show` on the same sibling was 403. A depth-2 session now reads, with its own
 * token over REST, every session around it through every read syscall that names a session,
 * and each must refuse exactly where `session_show` does.
 */

type Who = 'self' | 'child' | 'grandchild' | 'parent' | 'sibling' | 'otherZone';
type Read = (id: string, zone: string) => Promise<{ status: number; json: unknown }>;

/**
 * Every syscall a session may call that takes a session (or agent) id and returns its data.
 * The list is checked against the table below: a new one must be added here to be walked.
 */
const SESSION_READS = [
  'session_show',
  'session_events',
  'ipc_wait',
  'streams_transcript',
  'agent_get',
  'service_list',
] as const;

/** Session-callable syscalls that take an id of a session but are writes or control, with their own rule. */
const NOT_READS = new Set([
  'kill',
  'send',
  'suspend',
  'resume',
  'session_open',
  'session_delete',
  'service_register',
  'service_update',
  'service_heartbeat',
  'invocation_enqueue',
  'bridge_report_status',
  // A schedule that writes to a session: checked as that write when it fires.
  'schedule_create',
  'schedule_task',
]);

async function agentAs(h: HttpWarren, zone: string, parent?: string): Promise<string> {
  const r = await h.api('POST', `/zones/${zone}/agents`, {
    application_id: 'app',
    ...(parent ? { parent_id: parent } : {}),
  });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const id = r.json.agent.id as string;
  const s = await h.api('POST', `/zones/${zone}/agents/${id}/services`, {
    endpoint_url: `http://127.0.0.1:9/${id}`,
  });
  assert.equal(s.status, 200, JSON.stringify(s.json));
  return id;
}

forEachWarren(
  'one read scope per session',
  (t) => {
    it('every session read refuses a sibling (and parent, other zone) exactly where session_show does', async () => {
      // The table's session-callable syscalls with a session-id input are all accounted for.
      const named = allSyscalls
        .filter((s) => (s.callers as string[]).includes('session'))
        .filter((s) => {
          const shape = (s.input as { shape?: Record<string, unknown> }).shape ?? {};
          return ['id', 'session', 'agentId', 'session_id', 'stream'].some((k) => k in shape);
        })
        .map((s) => s.name)
        .filter((n) => !NOT_READS.has(n) && !(SESSION_READS as readonly string[]).includes(n));
      // Ids of other kinds (a task, a schedule, an invocation, a persona, a finding) have their own scope.
      const otherIds = new Set([
        'task_depend',
        'task_show',
        'task_tree',
        'task_start',
        'task_cancel',
        'task_complete',
        'task_delete',
        'knowledge_show',
        'schedule_update',
        'schedule_show',
        'schedule_pause',
        'schedule_resume',
        'schedule_delete',
        'schedule_run_now',
        'invocation_get',
        'invocation_cancel',
        'invocation_complete',
        'get_task',
        'update_task',
        'cancel_task',
        'persona_show',
      ]);
      assert.deepEqual(
        named.filter((n) => !otherIds.has(n)),
        [],
        'a session read naming a session is not walked below',
      );

      // Every session holds every read, so a refusal below is the read scope's, not the tool set's.
      const h = await startHttp(t, { gating: everyTool });
      const parent = await agentAs(h, 'default');
      const self = await agentAs(h, 'default', parent);
      const sibling = await agentAs(h, 'default', parent);
      const child = await agentAs(h, 'default', self);
      const grandchild = await agentAs(h, 'default', child);
      const otherZone = await agentAs(h, 'other');
      const ids: Record<Who, string> = { self, child, grandchild, parent, sibling, otherZone };
      for (const id of [parent, self, sibling, child, grandchild]) await waitStatus(h.warren, id, 'idle');

      const auth = h.tokenOf(self);
      const reads: Record<(typeof SESSION_READS)[number], Read> = {
        session_show: (id) => h.api('GET', `/v1/sessions/${id}`, undefined, { auth }),
        session_events: (id) => h.api('GET', `/v1/sessions/${id}/events?limit=100`, undefined, { auth }),
        ipc_wait: (id) => h.api('POST', '/v1/sessions/wait', { session: id, waitMs: 0 }, { auth }),
        streams_transcript: (id) => h.api('GET', `/v1/streams/stdin:${id}/transcript`, undefined, { auth }),
        // The caller's own zone in the path: the id is what is looked up.
        agent_get: (id) => h.api('GET', `/zones/default/agents/${id}`, undefined, { auth }),
        service_list: (id) => h.api('GET', `/zones/default/agents/${id}/services`, undefined, { auth }),
      };
      const wrong: string[] = [];
      for (const who of Object.keys(ids) as Who[]) {
        const show = await reads.session_show(ids[who], 'default');
        const mayRead = show.status === 200;
        for (const name of SESSION_READS) {
          const r = await reads[name](ids[who], 'default');
          if ((r.status === 200) !== mayRead)
            wrong.push(`${name} on ${who}: ${r.status} where session_show is ${show.status}`);
          if (!mayRead && r.status !== show.status && r.status !== 404)
            wrong.push(`${name} on ${who}: ${r.status}, want ${show.status}`);
          if (!mayRead && JSON.stringify(r.json).includes('app'))
            wrong.push(`${name} on ${who} echoed its record`);
        }
      }
      assert.deepEqual(wrong, []);
      // The rule itself: itself yes; a sibling no. (The coordinator's parent_id tree is its own:
      // every agent_spawn is the operator's child in the session tree, so a coordinator "child"
      // is not a descendant for session_show either, and the walk above expects 403 for it.)
      assert.equal((await reads.agent_get(self, 'default')).status, 200);
      assert.equal((await reads.agent_get(sibling, 'default')).status, 403);
      assert.equal((await reads.service_list(sibling, 'default')).status, 403);
      // The operator reads every agent.
      assert.equal((await h.api('GET', `/zones/default/agents/${sibling}`)).status, 200);
    });
  },
  ['sqlite'],
);
