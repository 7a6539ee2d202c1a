/**
 * `node --import tsx test/ui/screens-scale.ts`: the graph at 300 sessions and the timeline of
 * a 50-session task tree, into docs/ui/. Not a test.
 */
import { fileURLToPath } from 'node:url';
import { uiRig } from './browser.ts';
import { populate, TREE_50, waitForSessions } from './scene-scale.ts';

const OUT = fileURLToPath(new URL('../../docs/ui/', import.meta.url));

const rig = await uiRig();
try {
  const api = rig.server.api;
  await populate(rig.server, { sessions: 300, rooms: 30, taskTrees: 10 });
  const t = await api<{ task: { id: string } }>('POST', '/v1/tasks', {
    title: 'wide',
    prompt: 'fan out',
    spawn: { script: TREE_50 },
  });
  const live = await waitForSessions(rig.server, 350);
  for (const s of live.filter((x) => x.title === 'leaf').slice(0, 80))
    await api('POST', `/v1/sessions/${s.id}/send`, { text: 'check in' });
  const { page } = await rig.login();
  await page.goto(`${rig.server.url}/coordination?view=graph`);
  await page.locator('[data-cell]').first().waitFor();
  await page.waitForTimeout(1500);
  await page.screenshot({ path: `${OUT}graph-300.png` });
  await page.getByLabel('Find in graph').fill('feature 7');
  await page.waitForTimeout(500);
  await page.screenshot({ path: `${OUT}graph-300-search.png` });
  await page.goto(`${rig.server.url}/tasks/${t.json.task.id}/timeline`);
  await page.locator('[data-lane]').nth(49).waitFor();
  await page.waitForTimeout(1000);
  await page.screenshot({ path: `${OUT}timeline.png` });
} finally {
  await rig.close();
}
