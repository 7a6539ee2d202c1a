// A `command` agent for the cluster tests: every message it is given is answered on its own
// pipe (fd 1) through the REST API of whichever node runs it, then it reports idle.
import { createInterface } from 'node:readline';

const url = process.env.WARREN_URL;
const token = process.env.WARREN_TOKEN;
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

// Retried for 30 s: through a database outage a node answers 503 for seconds (the fault
// suite stops PostgreSQL for 4 s); an answer given up on would be a message lost by the test's
// agent, not by warren.
async function reply(text) {
  for (let i = 0; i < 300; i++) {
    const res = await fetch(`${url}/v1/fds/1/write`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: text }),
    }).catch(() => null);
    if (res?.ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

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
  for (const m of input.messages ?? []) if (m.kind !== 'signal') await reply(`echo:${m.text}`);
  say({ warren: 'idle' });
}
