import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCommands, kebab, type SyscallCommand } from '../../src/surfaces/cli/commands.ts';
import { syscallSpecs } from '../../src/surfaces/cli/manifest.ts';
import type { LocalCommand } from '../../src/surfaces/cli/types.ts';
import { allSyscalls } from '../../src/syscalls/table.ts';
import { cli } from './helpers.ts';

const bound = allSyscalls.filter((s) => s.cli);
const specs = syscallSpecs(allSyscalls);
const commands = buildCommands(specs).filter((c): c is SyscallCommand => c.kind === 'syscall');
const syscallOf = (c: SyscallCommand) => allSyscalls.find((s) => s.name === c.name)!;

describe('commands from the syscall table', () => {
  it('makes one command per syscall with a cli binding', () => {
    assert.ok(bound.length > 10);
    assert.deepEqual(
      commands.map((c) => c.name),
      bound.map((s) => s.name),
    );
    for (const c of commands) assert.deepEqual(c.words, syscallOf(c).cli!.command);
  });

  it('is plain data, so the build can ship it as JSON for the client', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(specs)), specs);
  });

  it('has an HTTP route for every command, since the CLI calls the server', () => {
    for (const s of bound) assert.ok(s.http, `${s.name} has a cli binding but no http route`);
  });

  it('turns every non-positional input field into a kebab-case flag, with the binding aliases', () => {
    for (const c of commands) {
      const fields = Object.keys((syscallOf(c).input as unknown as { shape: object }).shape);
      const flagged = c.flags.map((f) => f.field.name);
      const positional = c.positional.map((f) => f.name);
      assert.deepEqual([...positional, ...flagged].sort(), [...fields].sort(), c.name);
      for (const f of c.flags) assert.equal(f.flag, kebab(f.field.name));
    }
    const attach = commands.find((c) => c.name === 'streams_attach')!;
    assert.deepEqual(attach.flags.find((f) => f.field.name === 'permission')?.aliases, ['perm']);
    const create = commands.find((c) => c.name === 'streams_create')!;
    assert.equal(create.flags[0]?.flag, 'self-echo');
    const spawn = commands.find((c) => c.name === 'ipc_spawn')!;
    assert.ok(spawn.flags.some((f) => f.flag === 'max-turns' && f.field.kind === 'number'));
    assert.ok(
      spawn.flags.some((f) => f.flag === 'pipe' && f.field.kind === 'enum' && f.field.default === 'detach'),
    );
  });

  it('reads flag types from the schemas', () => {
    const kinds = (name: string) =>
      Object.fromEntries(commands.find((c) => c.name === name)!.flags.map((f) => [f.flag, f.field.kind]));
    assert.deepEqual(kinds('ps'), { all: 'boolean', limit: 'number', after: 'string' });
    assert.deepEqual(kinds('events'), {
      type: 'string',
      session: 'string',
      stream: 'string',
      since: 'string',
      until: 'string',
      // A seq or an event id: the server reads which.
      before: 'string',
      after: 'string',
      limit: 'number',
    });
    assert.equal(kinds('ipc_spawn').script, 'json');
    assert.equal(kinds('ipc_spawn').config, 'json');
    assert.equal(kinds('ipc_spawn').command, 'string');
  });

  it('refuses two commands with the same words', () => {
    const dup: LocalCommand = { command: ['ps'], summary: 'x', usage: 'x', run: async () => 0 };
    assert.throws(() => buildCommands(specs, [dup]), /defined twice/);
  });
});

describe('help', () => {
  it('lists every command, grouped, with its summary', async () => {
    const serve: LocalCommand = {
      command: ['serve'],
      summary: 'Run the server',
      usage: 'warren serve',
      run: async () => 0,
    };
    const { code, stdout } = await cli(['--help'], { locals: [serve] });
    assert.equal(code, 0);
    for (const heading of ['Sessions:', 'Streams:', 'Fds:', 'Events:', 'Server:'])
      assert.ok(stdout.includes(heading));
    for (const c of commands) {
      assert.ok(stdout.includes(c.words.join(' ')), c.words.join(' '));
      assert.ok(stdout.includes(c.summary), c.summary);
    }
    assert.ok(stdout.includes('Run the server'));
    assert.ok(stdout.indexOf('Server:') > stdout.indexOf('Events:'));
  });

  it('prints usage, flags and examples for each command', async () => {
    for (const c of commands) {
      const { code, stdout } = await cli([...c.words, '--help']);
      assert.equal(code, 0, c.words.join(' '));
      assert.ok(stdout.startsWith(`Usage: warren ${c.words.join(' ')}`), stdout);
      for (const example of c.examples) assert.ok(stdout.includes(example), example);
      for (const f of c.flags) assert.ok(stdout.includes(`--${f.flag}`), `${c.words.join(' ')} --${f.flag}`);
      for (const p of c.positional) assert.ok(stdout.includes(`<${p.name}>`));
      assert.ok(stdout.includes('--json'));
    }
  });

  it('shows enum choices, defaults and descriptions', async () => {
    const { stdout } = await cli(['streams', 'attach', '-h']);
    assert.match(stdout, /--permission, --perm <r\|w\|rw> +r read, w write, rw both \(default: rw\)/);
    assert.match(stdout, /--mode <sync\|async\|detach> +sync: .* \(default: async\)/);
    assert.match(stdout, /<stream> +A stream id or name/);
    const events = await cli(['events', '--help']);
    assert.match(events.stdout, /--since <text> +ISO 8601: at or after/);
    assert.match(events.stdout, /--limit <n>/);
  });

  it('lists the commands under a group', async () => {
    const help = await cli(['streams', '--help']);
    assert.equal(help.code, 0);
    assert.ok(help.stdout.includes('streams transcript <stream>'));
    const bare = await cli(['fds']);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /'fds' needs a subcommand/);
    assert.ok(bare.stderr.includes('fds read <fd>'));
    // A command that is a group too lists what lives under it.
    const inbox = await cli(['inbox', '--help']);
    assert.ok(inbox.stdout.startsWith('Usage: warren inbox'));
    assert.match(inbox.stdout, /Commands:\n {2}inbox show <id>[^\n]*\n {2}inbox answer <id> <text>/);
  });

  it('runs local commands with their arguments and shows their usage', async () => {
    let got: string[] = [];
    const demo: LocalCommand = {
      command: ['demo'],
      summary: 'Run the demo',
      usage: 'Usage: warren demo [--fast]',
      run: async (args) => {
        got = args;
        return 3;
      },
    };
    assert.equal((await cli(['--zone', 'z1', 'demo', '--fast', 'x'], { locals: [demo] })).code, 3);
    assert.deepEqual(got, ['--zone', 'z1', '--fast', 'x']);
    const help = await cli(['demo', '--help'], { locals: [demo] });
    assert.equal(help.code, 0);
    assert.equal(help.stdout, 'Run the demo\n\nUsage: warren demo [--fast]\n');
  });

  it('rejects an unknown command with exit 2', async () => {
    const { code, stderr } = await cli(['frobnicate']);
    assert.equal(code, 2);
    assert.match(stderr, /unknown command 'frobnicate'/);
  });
});
