import { useVirtualizer } from '@tanstack/react-virtual';
import { type ReactNode, useRef } from 'react';

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
  return (
    // A scrollable region, focusable so the keyboard can scroll it.
    <section
      ref={parent}
      className="vlist"
      style={{ height }}
      aria-label={label}
      tabIndex={-1}
      data-list={label}
    >
      <div style={{ height: v.getTotalSize(), position: 'relative' }}>
        {v.getVirtualItems().map((vi) => {
          const item = items[vi.index] as T;
          return (
            <div
              key={keyOf(item, vi.index)}
              className="vrow"
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
