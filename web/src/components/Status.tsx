/** A status word with its colour (CSS classes per status). */
export function Status({ value }: { value: string }) {
  return <span className={`status status-${value}`}>{value}</span>;
}
