/**
 * `node --import tsx test/ui/screens.ts`: screenshots of each page into docs/ui/, from a real
 * server with a small scene (rooms, listening sessions, a task, messages). Not a test.
 */
import { fileURLToPath } from 'node:url';
import { LISTENER, uiRig } from './browser.ts';

const OUT = fileURLToPath(new URL('../../docs/ui/', import.meta.url));

const rig = await uiRig();
try {
  const api = rig.server.api;
  const room = await api<{ stream: { id: string }; fd: number }>('POST', '/v1/streams', { name: 'planning' });
  const ids: string[] = [];
  for (const title of ['lead', 'alice', 'bob']) {
    const r = await api<{ session: { id: string } }>('POST', '/v1/sessions', { title, script: LISTENER });
    ids.push(r.json.session.id);
    await api('POST', `/v1/streams/${room.json.stream.id}/attach`, { session: r.json.session.id });
  }
  await api('POST', `/v1/fds/${room.json.fd}/write`, { message: 'standup in five minutes' });
  await api('POST', `/v1/sessions/${ids[0]}/send`, { text: 'plan the release' });
  await api('POST', '/v1/tasks', { title: 'map the API', prompt: 'map it', hold: true });
  const { page } = await rig.login();
  const shot = async (name: string) => {
    await page.waitForTimeout(1200);
    await page.screenshot({ path: `${OUT}${name}.png` });
  };
  await page.goto(`${rig.server.url}/coordination?stream=${room.json.stream.id}`);
  await shot('coordination-list');
  await page.goto(`${rig.server.url}/coordination?view=graph`);
  await shot('coordination-graph');
  await page.goto(`${rig.server.url}/sessions`);
  await shot('sessions');
  await page.goto(`${rig.server.url}/sessions/${ids[0]}`);
  await shot('session');
  await page.goto(`${rig.server.url}/tasks`);
  await shot('tasks');
  await page.goto(`${rig.server.url}/inbox`);
  await shot('inbox');
  await page.goto(`${rig.server.url}/log`);
  await shot('log');
  await page.getByRole('button', { name: 'Toggle dark mode' }).click();
  await page.goto(`${rig.server.url}/coordination?stream=${room.json.stream.id}`);
  await page.getByRole('button', { name: 'Toggle dark mode' }).click();
  await shot('coordination-dark');
} finally {
  await rig.close();
}
