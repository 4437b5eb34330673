import {
  elementScroll,
  observeElementOffset,
  observeElementRect,
  Virtualizer,
  type VirtualizerOptions,
} from '@tanstack/virtual-core';
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useReducer, useRef, useState } from 'preact/hooks';

interface Props<T> {
  items: readonly T[];
  /** Changes whenever an item changed in place. */
  version: number;
  keyOf: (item: T) => string;
  render: (item: T) => ComponentChildren;
  label: string;
  /** Keep the newest item in view while the reader is at the bottom. */
  follow?: boolean;
}

/**
 * A scrolling list that renders only the rows in view (TanStack Virtual's core), each measured
 * once drawn, so a conversation of thousands of events scrolls as smoothly as one of ten.
 */
export function VirtualList<T>({ items, version, keyOf, render, label, follow = true }: Props<T>) {
  const scroller = useRef<HTMLDivElement>(null);
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const atBottom = useRef(true);
  const options = (): VirtualizerOptions<HTMLDivElement, HTMLDivElement> => ({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 72,
    overscan: 4,
    getItemKey: (index) => keyOf(items[index]),
    observeElementRect,
    observeElementOffset,
    scrollToFn: elementScroll,
    onChange: () => rerender(0),
  });
  const [virtualizer] = useState(() => new Virtualizer(options()));
  virtualizer.setOptions({ ...virtualizer.options, ...options() });

  // One ref callback for every row: a new one each render would measure every row again.
  const measure = useCallback((el: HTMLDivElement | null) => virtualizer.measureElement(el), [virtualizer]);
  useEffect(() => virtualizer._didMount(), [virtualizer]);
  useLayoutEffect(() => virtualizer._willUpdate());
  useLayoutEffect(() => {
    if (follow && atBottom.current && items.length > 0) virtualizer.scrollToIndex(items.length - 1, { align: 'end' });
  }, [items.length, version]);

  return (
    <div
      ref={scroller}
      class="timeline"
      role="log"
      aria-label={label}
      tabIndex={0}
      data-count={items.length}
      // Only the reader's scrolling decides whether to follow: new rows below do not.
      onScroll={(e) => {
        const el = e.currentTarget;
        atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 120;
      }}
    >
      <div style={{ height: `${virtualizer.getTotalSize()}px`, position: 'relative' }}>
        {virtualizer.getVirtualItems().map((row) => (
          <div
            key={row.key as string}
            data-index={row.index}
            ref={measure}
            class="row"
            style={{ transform: `translateY(${row.start}px)` }}
          >
            {render(items[row.index])}
          </div>
        ))}
      </div>
    </div>
  );
}
