/**
 * `node --import tsx test/ui/screens.ts`: screenshots of each page at 1280×800 into docs/ui/,
 * from a real server populated by scene.ts. Not a test; rerun it after UI changes and look.
 */
import { fileURLToPath } from 'node:url';
import { uiRig } from './browser.ts';
import { populate } from './scene.ts';

const OUT = fileURLToPath(new URL('../../docs/ui/', import.meta.url));

const rig = await uiRig();
try {
  const scene = await populate(rig.server.api, rig.dataDir);
  const { page } = await rig.login();
  const url = rig.server.url;
  const shot = async (name: string, path: string) => {
    await page.goto(url + path);
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    await page.waitForTimeout(1500);
    await page.screenshot({ path: `${OUT}${name}.png` });
  };
  // A threshold of a few seconds makes the sleeping session count as stuck for the picture.
  await new Promise((r) => setTimeout(r, 3000));
  await shot('home', '/?stuck=0.05');
  await shot('sessions', '/sessions');
  await shot('session', `/sessions/${scene.acp}`);
  await page.locator('.turn-tool summary').first().click();
  await page.screenshot({ path: `${OUT}session-tool.png` });
  await shot('tasks', '/tasks');
  await shot('task', `/tasks/${scene.tasks.review}`);
  await shot('inbox', '/inbox');
  await shot('schedules', `/schedules/${scene.schedules.nightly}`);
  await shot('knowledge', `/knowledge/${scene.finding}`);
  await shot('coordination-list', `/coordination?stream=${scene.room.id}`);
  await shot('coordination-graph', '/coordination?view=graph');
  await shot('log', '/log');
  await page.getByRole('button', { name: 'Toggle dark mode' }).click();
  await shot('home-dark', '/?stuck=0.05');
  await page.getByRole('button', { name: 'Toggle dark mode' }).click();
} finally {
  await rig.close();
}
