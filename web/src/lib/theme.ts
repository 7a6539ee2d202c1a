/**
 * The colour theme: the operator's saved choice, else the system's preference. One attribute on
 * <html> selects the palette, so the stylesheet holds each palette once.
 */
export type Theme = 'light' | 'dark';

const KEY = 'warren.theme';

export function initialTheme(): Theme {
  const saved = localStorage.getItem(KEY);
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function saveTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem(KEY, theme);
}
