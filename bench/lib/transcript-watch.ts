import type { Page } from 'playwright-core';

type Seen = { seen: Record<string, number> };

/** Records, in the page, when each transcript message text first enters the DOM. */
export async function watchTranscript(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as Seen;
    w.seen = {};
    new MutationObserver(() => {
      for (const el of document.querySelectorAll('[data-testid="transcript"] .text')) {
        const t = el.textContent ?? '';
        if (!(t in w.seen)) w.seen[t] = Date.now();
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

/** When `text` entered the DOM (page clock), waiting for it. */
export async function seenAt(page: Page, text: string): Promise<number | undefined> {
  await page.waitForFunction((t) => (window as unknown as Seen).seen[t], text);
  return page.evaluate((t) => (window as unknown as Seen).seen[t], text);
}
