import { z } from 'zod';

const MIB = 1024 * 1024;

/** The knowledge plugin's settings (`plugins.settings.knowledge`). */
export const knowledgeConfig = z
  .object({
    /** Most UTF-8 bytes of a finding's body. */
    maxFindingBytes: z
      .number()
      .int()
      .min(256)
      .max(MIB)
      .default(16 * 1024),
    /** Most UTF-8 bytes of a workpad. */
    maxWorkpadBytes: z
      .number()
      .int()
      .min(256)
      .max(4 * MIB)
      .default(64 * 1024),
    /** Most UTF-8 bytes of start context put ahead of a task session's first prompt (0: none). */
    contextBytes: z
      .number()
      .int()
      .min(0)
      .max(MIB)
      .default(16 * 1024),
    /** Search hits for the task's prompt that start context includes (after its related tasks' findings). */
    contextHits: z.number().int().min(0).max(50).default(5),
  })
  .strict();

export type KnowledgeConfig = z.output<typeof knowledgeConfig>;
