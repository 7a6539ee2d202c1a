import { WarrenError } from '../../vocab/errors.ts';

export const notFoundGroup = (folder: string) =>
  new WarrenError('not_found', `no group ${folder.slice(0, 200)}`, {
    what: 'group',
    id: folder.slice(0, 200),
  });

export const conflictError = (message: string) => new WarrenError('conflict', message);
