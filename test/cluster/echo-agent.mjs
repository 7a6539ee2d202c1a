// A `command` agent for the cluster tests: every message it is given is answered on its own
// pipe (fd 1) through the REST API of whichever node runs it, then it reports idle.
import { appendFileSync, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

const url = process.env.WARREN_URL;
const token = process.env.WARREN_TOKEN;
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
// ECHO_TRACE (a directory): what this process was given and how each answer went, a file per
// session, for a fault run whose answers went missing. A confined agent cannot see the host's
// directories: it writes to its own home instead, where the run's dump looks for it.
const traceFile = process.env.ECHO_TRACE
  ? `${existsSync(process.env.ECHO_TRACE) ? process.env.ECHO_TRACE : process.env.HOME}/echo-${process.env.WARREN_SESSION_ID}.log`
  : undefined;
const trace = (line) => {
  if (traceFile) appendFileSync(traceFile, `${Date.now()} ${process.pid} ${line}\n`);
};

// Retried for 30 s: through a database outage a node answers 503 for seconds (the fault
// suite stops PostgreSQL for 4 s); an answer given up on would be a message lost by the test's
// agent, not by warren.
async function reply(text) {
  let last = '';
  for (let i = 0; i < 300; i++) {
    const res = await fetch(`${url}/v1/fds/1/write`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: text }),
    }).catch(() => null);
    if (res?.ok) return trace(`answered ${text} (try ${i + 1}${last})`);
    last = `, last refusal ${res ? `${res.status} ${await res.text().catch(() => '')}` : 'no connection'}`;
    await new Promise((r) => setTimeout(r, 100));
  }
  trace(`gave up ${text}${last}`);
}

trace('started');
say({ warren: 'idle' });
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  let input;
  try {
    input = JSON.parse(line);
  } catch {
    continue;
  }
  if (input.type !== 'input') continue;
  say({ warren: 'busy' });
  trace(`given ${(input.messages ?? []).map((m) => m.text).join(' ')}`);
  for (const m of input.messages ?? []) if (m.kind !== 'signal') await reply(`echo:${m.text}`);
  say({ warren: 'idle' });
}
