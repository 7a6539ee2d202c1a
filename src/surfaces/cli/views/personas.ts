import { renderKeyValues, renderTable } from '../table.ts';
import { compactJson, iso, text, type View, view } from './format.ts';

/** Personas: a table of the zone's, one in full, and what create and delete did. */

interface Persona {
  name: string;
  runtime: string;
  model?: string;
  systemPrompt?: string;
  tools?: string[];
  grants?: unknown;
  maxTurns?: number;
  budget?: unknown;
  env?: Record<string, string>;
  secretEnv?: Record<string, string>;
  cwd?: string;
  config?: Record<string, unknown>;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
}

const clip = (t: string, n: number) => (t.length > n ? `${t.slice(0, n - 1)}…` : t);

const list = view<{ personas: Persona[] }>((out, ctx) =>
  renderTable(
    ['Name', 'Runtime', 'Model', 'Tools', 'Max turns', 'System prompt', 'Updated'],
    out.personas.map((p) => [
      p.name,
      p.runtime,
      p.model ?? '',
      p.tools?.join(', ') ?? '',
      text(p.maxTurns),
      clip(p.systemPrompt ?? '', 40),
      iso(p.updatedAt),
    ]),
    { ...ctx, empty: 'no personas' },
  ),
);

const show = view<{ persona: Persona }>(({ persona: p }, ctx) =>
  renderKeyValues(
    [
      ['name', p.name],
      ['runtime', p.runtime],
      ['model', text(p.model)],
      ['system prompt', text(p.systemPrompt)],
      ['tools', p.tools?.join(', ') ?? ''],
      ['grants', compactJson(p.grants)],
      ['max turns', text(p.maxTurns)],
      ['budget', compactJson(p.budget)],
      ['env', compactJson(p.env)],
      ['secret env', compactJson(p.secretEnv)],
      ['cwd', text(p.cwd)],
      ['config', compactJson(p.config)],
      ['created by', p.createdBy],
      ['created', iso(p.createdAt)],
      ['updated', iso(p.updatedAt)],
    ],
    ctx.width ? { width: ctx.width } : {},
  ),
);

const create = view<{ persona: Persona; created: boolean }>(
  (out) => `${out.created ? 'created' : 'replaced'} persona ${out.persona.name} (${out.persona.runtime})\n`,
);

const remove = view<{ name: string }>((out) => `deleted persona ${out.name}\n`);

export const personaViews: Record<string, View> = {
  persona_list: list,
  persona_show: show,
  persona_create: create,
  persona_delete: remove,
};
