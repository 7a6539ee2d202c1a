import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { inputProblem, parseCommandArgs } from '../../src/surfaces/cli/args.ts';
import { buildCommands, type SyscallCommand } from '../../src/surfaces/cli/commands.ts';
import { UsageError } from '../../src/surfaces/cli/errors.ts';
import { syscallSpecs } from '../../src/surfaces/cli/manifest.ts';
import { allSyscalls } from '../../src/syscalls/table.ts';
import { cli, tempDir } from './helpers.ts';

const commands = buildCommands(syscallSpecs(allSyscalls)).filter(
  (c): c is SyscallCommand => c.kind === 'syscall',
);
const command = (name: string) => commands.find((c) => c.name === name)!;
const parse = (name: string, args: string[], cwd = tempDir()) => parseCommandArgs(command(name), args, cwd);

describe('arguments to syscall input', () => {
  it('takes positionals in order and parses numbers', () => {
    assert.deepEqual(parse('session_events', ['ses_1', '--from', '5', '--limit', '10']).input, {
      id: 'ses_1',
      from: 5,
      limit: 10,
    });
    assert.deepEqual(parse('ipc_write', ['3', 'hello room']).input, { fd: 3, message: 'hello room' });
  });

  it('treats boolean flags as switches', () => {
    assert.deepEqual(parse('ps', ['--all']).input, { all: true });
    assert.deepEqual(parse('ps', []).input, {});
    assert.deepEqual(parse('streams_create', ['war-room', '--self-echo']).input, {
      name: 'war-room',
      selfEcho: true,
    });
    assert.throws(() => parse('ps', ['--all=yes']), UsageError);
    // Or given a value, as the docs' `task create … --review true` writes it.
    assert.deepEqual(parse('ps', ['--all', 'true']).input, { all: true });
    assert.deepEqual(parse('ps', ['--all', 'false']).input, { all: false });
    assert.deepEqual(parse('ps', ['--all=false']).input, { all: false });
    const review = parse('task_create', ['t', '--prompt', 'p', '--review', 'true']).input;
    assert.equal(review.review, true);
    // A positional that happens to read "true" after a non-boolean flag stays a positional.
    assert.deepEqual(parse('ipc_write', ['3', 'true']).input, { fd: 3, message: 'true' });
  });

  it('maps aliases onto their field and refuses both at once', () => {
    assert.deepEqual(parse('streams_attach', ['ses_1', 'room', '--perm', 'r', '--mode', 'detach']).input, {
      session: 'ses_1',
      stream: 'room',
      permission: 'r',
      mode: 'detach',
    });
    assert.equal(parse('streams_attach', ['ses_1', 'room', '--permission', 'w']).input.permission, 'w');
    assert.throws(
      () => parse('streams_attach', ['s', 'r', '--perm', 'r', '--permission', 'rw']),
      /same option/,
    );
  });

  it('separates global options from the input', () => {
    const { input, globals } = parse('ps', ['--json', '--url', 'http://h:1', '--zone', 'z', '--key', 'k']);
    assert.deepEqual(input, {});
    assert.deepEqual(globals, { json: true, url: 'http://h:1', zone: 'z', key: 'k' });
  });

  it('reads JSON values, and @file for their text', () => {
    const dir = tempDir();
    const yaml = 'steps:\n  - say: hello\n';
    writeFileSync(join(dir, 'demo.yaml'), yaml);
    writeFileSync(join(dir, 'config.json'), '{"file": "x.yaml", "n": 2}');
    const { input } = parse(
      'ipc_spawn',
      ['go', '--script', '@demo.yaml', '--config', '@config.json', '--env', '{"A":"1"}', '--max-turns', '4'],
      dir,
    );
    assert.deepEqual(input, {
      prompt: 'go',
      script: yaml,
      config: { file: 'x.yaml', n: 2 },
      env: { A: '1' },
      maxTurns: 4,
    });
    assert.deepEqual(parse('ipc_spawn', ['--script', '{"steps":[]}']).input.script, { steps: [] });
    assert.equal(parse('ipc_write', ['3', 'm', '--data', '42']).input.data, 42);
    assert.equal(parse('ipc_write', ['3', 'm', '--data', 'plain words']).input.data, 'plain words');
  });

  it('rejects bad values with usage errors naming the flag', () => {
    assert.throws(() => parse('ipc_spawn', ['--config', '{nope']), /--config expects JSON/);
    assert.throws(
      () => parse('ipc_spawn', ['--script', '@missing.yaml']),
      /--script: cannot read .*missing\.yaml/,
    );
    assert.throws(
      () => parse('session_events', ['s', '--limit', 'ten']),
      /--limit expects a number, got "ten"/,
    );
    assert.throws(() => parse('ipc_read', ['three']), /<fd> expects a number/);
  });
});

describe("the server's schema issues, named by flag", () => {
  it('labels each issue with the flag or argument it came from', () => {
    const cmd = command('session_events');
    const problem = inputProblem(cmd, { id: 's', limit: 0 }, [
      { path: 'limit', message: 'Too small: expected number to be >0' },
      { path: 'id', message: 'Too short' },
      { path: 'from', message: 'Required' },
    ]);
    assert.ok(problem instanceof UsageError);
    assert.equal(
      problem.message,
      '--limit: Too small: expected number to be >0; <id>: Too short; missing --from',
    );
    assert.deepEqual(problem.command, ['session', 'events']);
    assert.equal(inputProblem(cmd, {}, []), undefined);
  });
});

describe('usage errors exit 2', () => {
  const cases: [string[], RegExp][] = [
    [
      ['streams', 'attach', 'ses_1', 'room', '--mode', 'often'],
      /--mode must be one of sync, async, detach \(got "often"\)/,
    ],
    [['spawn', '--pipe', 'tube'], /--pipe must be one of sync, async, detach/],
    [['ps', '--bogus'], /unknown option --bogus/],
    [['kill'], /missing argument <id>/],
    [['send', 'ses_1'], /missing argument <text>/],
    [['fds', 'read', '3', 'extra'], /unexpected argument "extra"/],
    [['events', '--limit'], /--limit/],
    [['--json'], /missing command/],
  ];
  for (const [argv, message] of cases) {
    it(`warren ${argv.join(' ')}`, async () => {
      const { code, stderr, stdout } = await cli(argv);
      assert.equal(code, 2);
      assert.match(stderr, message);
      assert.equal(stdout, '');
    });
  }

  it('points at the command help', async () => {
    const { stderr } = await cli(['streams', 'close']);
    assert.match(stderr, /Run 'warren streams close --help' for usage/);
  });
});
