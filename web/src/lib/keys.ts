import { type KeyboardEvent, useEffect, useRef } from 'react';

/** Is the key press meant for a text field (so page shortcuts leave it alone)? */
export const typing = (t: EventTarget | null) =>
  t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));

/**
 * The page-wide keys: `/` focuses the page's search box (the element marked data-search).
 * Escape is each drawer's own (useEscape); dialogs close on it natively.
 */
export function useGlobalKeys() {
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      const box = document.querySelector<HTMLInputElement>('[data-search]');
      if (!box) return;
      e.preventDefault();
      box.focus();
      box.select();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

/** Escape calls `fn` unless a modal dialog is open (the dialog takes its own Escape). */
export function useEscape(fn: () => void) {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key !== 'Escape' || document.querySelector('dialog[open]')) return;
      ref.current();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

/** The focusable rows of a list, in order: each marked data-row. */
const rowsOf = (el: HTMLElement) => [...el.querySelectorAll<HTMLElement>('[data-row]')];

/**
 * ArrowDown / ArrowUp move the focus to the next / previous row of the list; `beyond` is asked
 * to bring in a row past the rendered ones (a windowed list scrolls, then focuses it).
 */
export function arrowRows(e: KeyboardEvent<HTMLElement>, beyond?: (delta: number, from: number) => void) {
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
  if (typing(e.target) && (e.target as HTMLElement).tagName !== 'INPUT') return;
  const rows = rowsOf(e.currentTarget);
  const delta = e.key === 'ArrowDown' ? 1 : -1;
  const at = rows.findIndex((r) => r === document.activeElement || r.contains(document.activeElement));
  e.preventDefault();
  const next = rows[at < 0 ? 0 : at + delta];
  if (next) next.focus();
  else if (beyond && at >= 0) beyond(delta, Number(rows[at]?.dataset.row ?? -1));
}
