import { z } from 'zod';

/** The mutation classes a bridge may be started with; anything else stays read-only. */
export const MUTATION_CLASSES = ['sessions', 'questions', 'reports'] as const;
export type MutationClass = (typeof MUTATION_CLASSES)[number];

/**
 * The turns plugin's settings (`plugins.settings.turns`). Fail-closed defaults: no mutation
 * class, no working-directory root (nothing can be started or adopted), the empty namespace.
 */
export const turnsConfig = z
  .object({
    mutations: z.array(z.enum(MUTATION_CLASSES)).default([]),
    /** Canonical roots session working directories must be inside. */
    workdirRoots: z.array(z.string().min(1)).default([]),
    profile: z.string().max(128).default(''),
    repo: z.string().max(128).default(''),
    /** Bytes `read_artifact` returns at most. */
    artifactByteCap: z.number().int().positive().max(10_000_000).default(65_536),
    /** Bytes of a final response kept on the turn (the rest is marked truncated). */
    responseByteCap: z.number().int().positive().max(10_000_000).default(65_536),
    /** Command line of `start_session` with kind `command` when none is given. */
    sessionCommand: z.string().max(4096).optional(),
  })
  .strict()
  .prefault({});
export type TurnsConfig = z.output<typeof turnsConfig>;

/** What one caller of the bridge may do: the plugin's settings, possibly narrowed by an adapter. */
export interface Policy {
  mutations: readonly MutationClass[];
  workdirRoots: readonly string[];
  profile: string;
  repo: string;
  artifactByteCap: number;
  responseByteCap: number;
}
