import { invalid } from '../../vocab/errors.ts';

/**
 * Group folders: `main`, `main/research`, `main/research/scraper`. A folder is also a path
 * under the ipc and group directories (`<data-dir>/ipc/<folder>/router.sock`), and agents
 * name folders, so only plain segments are accepted: nothing that could climb out (`..`,
 * `.`, a leading `/`), no empty segment, no odd character.
 */
const SEGMENT = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const MAX_FOLDER_DEPTH = 8;
export const MAX_FOLDER_LENGTH = 200;

export function checkFolder(folder: string): string {
  if (folder.length === 0 || folder.length > MAX_FOLDER_LENGTH) {
    throw invalid(`a group folder is 1 to ${MAX_FOLDER_LENGTH} characters`, { field: 'folder' });
  }
  const parts = folder.split('/');
  if (parts.length > MAX_FOLDER_DEPTH) {
    throw invalid(`a group folder is at most ${MAX_FOLDER_DEPTH} levels deep`, { field: 'folder' });
  }
  for (const p of parts) {
    if (!SEGMENT.test(p)) {
      throw invalid(
        `group folder ${JSON.stringify(folder.slice(0, 100))}: each segment is lowercase letters, digits, - and _ (starting with a letter or digit)`,
        { field: 'folder' },
      );
    }
  }
  return folder;
}

/** 0 for a root group, 1 for its children, … */
export const depthOf = (folder: string): number => folder.split('/').length - 1;

export const parentOf = (folder: string): string | null => {
  const i = folder.lastIndexOf('/');
  return i < 0 ? null : folder.slice(0, i);
};

/** `folder` is `ancestor` or lies under it. */
export const within = (folder: string, ancestor: string): boolean =>
  folder === ancestor || folder.startsWith(`${ancestor}/`);
