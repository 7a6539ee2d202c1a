import type { Usage } from './types.ts';

export const time = (ms: number) => new Date(ms).toLocaleTimeString();
export const dateTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

export function usage(u: Usage | undefined): string {
  if (!u) return '';
  const parts: string[] = [];
  if (u.inputTokens || u.outputTokens) parts.push(`${u.inputTokens ?? 0}↓ ${u.outputTokens ?? 0}↑ tok`);
  if (u.costUsd) parts.push(`$${u.costUsd.toFixed(4)}`);
  if (u.turns) parts.push(`${u.turns} turns`);
  return parts.join(' · ');
}

export const clip = (s: string | null | undefined, n = 120) =>
  !s ? '' : s.length > n ? `${s.slice(0, n - 1)}…` : s;
