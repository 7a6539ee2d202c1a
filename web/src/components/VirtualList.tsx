import { useVirtualizer } from '@tanstack/react-virtual';
import { type KeyboardEvent, type ReactNode, useRef } from 'react';

/** A windowed list: only the rows in view are in the DOM, so 500 sessions or 10,000 events stay fast. */
export function VirtualList<T>({
  items,
  row,
  rowHeight = 34,
  height = '100%',
  label,
  keyOf,
}: {
  items: T[];
  row: (item: T, index: number) => ReactNode;
  rowHeight?: number;
  height?: string;
  label: string;
  keyOf: (item: T, index: number) => string;
}) {
  const parent = useRef<HTMLElement>(null);
  const v = useVirtualizer({
    count: items.length,
    getScrollElement: () => parent.current,
    estimateSize: () => rowHeight,
    overscan: 8,
  });
  // ArrowDown / ArrowUp: the next row is scrolled into the window first, then focused.
  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const here = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>('.vrow');
    const at = here ? Number(here.dataset.index) : -1;
    const next = Math.min(items.length - 1, Math.max(0, at + (e.key === 'ArrowDown' ? 1 : -1)));
    e.preventDefault();
    const focus = () =>
      parent.current
        ?.querySelector<HTMLElement>(`.vrow[data-index="${next}"]`)
        ?.querySelector<HTMLElement>('[data-row], a, button, [tabindex]');
    const rendered = focus();
    if (rendered) {
      rendered.focus();
      rendered.scrollIntoView({ block: 'nearest' });
      return;
    }
    v.scrollToIndex(next);
    requestAnimationFrame(() => focus()?.focus());
  };
  return (
    // A scrollable region, focusable so the keyboard can scroll it.
    <section
      ref={parent}
      className="vlist"
      style={{ height }}
      aria-label={label}
      tabIndex={-1}
      data-list={label}
      onKeyDown={onKeyDown}
    >
      <div style={{ height: v.getTotalSize(), position: 'relative' }}>
        {v.getVirtualItems().map((vi) => {
          const item = items[vi.index] as T;
          return (
            <div
              key={keyOf(item, vi.index)}
              className="vrow"
              data-index={vi.index}
              style={{
                position: 'absolute',
                top: 0,
                left: 0,
                right: 0,
                height: vi.size,
                transform: `translateY(${vi.start}px)`,
              }}
            >
              {row(item, vi.index)}
            </div>
          );
        })}
      </div>
    </section>
  );
}
