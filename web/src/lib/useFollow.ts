import { type RefObject, useEffect, useLayoutEffect, useRef } from 'react';

/** The nearest ancestor that scrolls (the page's <main>, a drawer's transcript). */
const scroller = (el: HTMLElement | null): HTMLElement | null => {
  for (let p = el?.parentElement ?? null; p; p = p.parentElement) {
    const o = getComputedStyle(p).overflowY;
    if (o === 'auto' || o === 'scroll') return p;
  }
  return null;
};

/**
 * Keeps a transcript scrolled to its newest entry as entries arrive (`last` changes), unless
 * the reader has scrolled up: then it stays where they are until they come back down.
 */
export function useFollow(content: RefObject<HTMLElement | null>, last: unknown) {
  const atBottom = useRef(true);
  useEffect(() => {
    const box = scroller(content.current);
    if (!box) return;
    const onScroll = () => {
      atBottom.current = box.scrollHeight - box.scrollTop - box.clientHeight < 60;
    };
    box.addEventListener('scroll', onScroll, { passive: true });
    return () => box.removeEventListener('scroll', onScroll);
  }, [content]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the newest entry changes
  useLayoutEffect(() => {
    const box = scroller(content.current);
    if (box && atBottom.current) box.scrollTop = box.scrollHeight;
  }, [last]);
}
