/** SIGTERM what is left in a process group whose leader has exited; SIGKILL it after a grace. */
export async function reapGroup(pgid: number, graceMs = 1000): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {}
  const end = Date.now() + graceMs;
  while (alive() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {}
}
