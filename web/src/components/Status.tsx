import { glyph } from '../lib/state.ts';

/** A state as a glyph and a word (never colour alone), with its colour from the stylesheet. */
export function Status({ value, title }: { value: string; title?: string | null | undefined }) {
  return (
    <span className={`status status-${value}`} data-state={value} title={title ?? undefined}>
      <span aria-hidden="true">{glyph(value)}</span> {value}
    </span>
  );
}
