import { z } from 'zod';
import { defineSyscall } from '../../../contract/syscall.ts';
import { actorOf } from '../actor.ts';
import { addRoute, deleteRoute, setRoutes, routeView as viewRoute, visibleRoutes } from '../routes.ts';
import { actingGroup, folder, groups, routeView } from './common.ts';

const seq = z.coerce
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1)
  .describe('Evaluation order: lower first');
const match = z
  .string()
  .max(1024)
  .describe(
    'Space-separated key=glob pairs over platform, room, chat_jid, sender, verb (all must hold; empty: any)',
  );
const spec = z.object({ seq, match, target: folder.describe('The group that gets matching messages') });

export const listRoutes = defineSyscall({
  name: 'list_routes',
  group: 'groups',
  summary: 'List routes in evaluation order: a root group sees all, others those targeting their subtree',
  input: z.object({ ...actingGroup }),
  output: z.object({ routes: z.array(routeView) }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/routes' },
  cli: { command: ['route', 'list'], examples: ['warren route list'] },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    return { routes: (await visibleRoutes(groups(ctx).tables.reader, a)).map(viewRoute) };
  },
});

export const addRouteSyscall = defineSyscall({
  name: 'add_route',
  group: 'groups',
  summary: 'Add a route: messages matching it go to its target group (yours or one under it)',
  input: spec.extend(actingGroup),
  output: z.object({ route: routeView }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/routes' },
  cli: {
    command: ['route', 'add'],
    positional: ['seq', 'match', 'target'],
    examples: ['warren route add 10 "platform=telegram verb=mention" main/research'],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const row = await groups(ctx).tables.write((tx) =>
      addRoute(tx, ctx.kernel.ids, a, i, groups(ctx).maxRoutesPerGroup),
    );
    return { route: viewRoute(row) };
  },
});

export const setRoutesSyscall = defineSyscall({
  name: 'set_routes',
  group: 'groups',
  summary: 'Replace every route targeting your group or one under it with these',
  input: z.object({
    routes: z.array(spec).max(10_000).describe('The routes that replace them: { seq, match, target }'),
    ...actingGroup,
  }),
  output: z.object({ routes: z.array(routeView) }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/routes/set' },
  cli: {
    command: ['route', 'set'],
    examples: [
      'warren route set --routes \'[{"seq":1,"match":"room=-5075870332","target":"main"}]\' --group main',
    ],
  },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const rows = await groups(ctx).tables.write((tx) =>
      setRoutes(tx, ctx.kernel.ids, a, i.routes, groups(ctx).maxRoutesPerGroup),
    );
    return { routes: rows.map(viewRoute) };
  },
});

export const deleteRouteSyscall = defineSyscall({
  name: 'delete_route',
  group: 'groups',
  summary: 'Delete a route (one targeting your group or one under it)',
  input: z.object({ id: z.string().min(1).max(200).describe('The route id (list_routes)'), ...actingGroup }),
  output: z.object({ deleted: z.string() }),
  callers: ['operator'],
  http: { method: 'DELETE', path: '/v1/routes/:id' },
  cli: { command: ['route', 'delete'], positional: ['id'], examples: ['warren route delete route_01j…'] },
  async handler(ctx, i) {
    const a = actorOf(ctx.principal, i.group);
    const row = await groups(ctx).tables.write((tx) => deleteRoute(tx, a, i.id));
    return { deleted: row.id };
  },
});
