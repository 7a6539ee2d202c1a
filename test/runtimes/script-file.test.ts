import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ScriptRuntime } from '../../src/runtimes/script/runtime.ts';
import { WarrenError } from '../../src/vocab/errors.ts';

/**
 * The attacks (issue 7): `config.file` naming /dev/zero or /dev/urandom froze and then
 * aborted the server; naming /etc/shadow returned its lines in the error. Files are read
 * only under allowed roots, only regular files, size-capped, and never echoed.
 */
const SECRET = 'sk-planted-7f3a9c1e5b';
const base = mkdtempSync(join(tmpdir(), 'warren-script-file-'));
const root = join(base, 'root');
const outside = join(base, 'outside');
mkdirSync(root);
mkdirSync(outside);
writeFileSync(join(outside, 'secret.yaml'), `steps:\n  - say: ${SECRET}\n`);
writeFileSync(join(outside, 'shadow'), `root:${SECRET}:19000:0:99999:7:::\n`);
symlinkSync(join(outside, 'secret.yaml'), join(root, 'link.yaml'));
writeFileSync(join(root, 'good.yaml'), 'steps:\n  - say: hello\n');
after(() => rmSync(base, { recursive: true, force: true }));

const spec = (config: Record<string, unknown>) => ({ prompt: null, config, cwd: null, model: null, env: {} });

/** The error validate throws: an invalid_input WarrenError. */
function refusal(rt: ScriptRuntime, file: string): WarrenError {
  try {
    rt.validate(spec({ file }));
  } catch (error) {
    assert.ok(error instanceof WarrenError, String(error));
    assert.equal(error.code, 'invalid_input');
    return error;
  }
  assert.fail(`${file} was accepted`);
}

/**
 * Bytes this process has read so far (read(2) and friends, any file: /proc/self/io's
 * rchar). The check below runs synchronously, so nothing else reads in between.
 */
function bytesRead(): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
}

/**
 * Refused without reading: the process read next to nothing (reading /proc/self/io itself
 * costs a few hundred bytes; a read of the file would cost up to the 64 KiB cap, or never end
 * on /dev/zero) and grew no memory. A count of bytes, not a wall time, so a loaded machine
 * cannot fail it.
 */
function refusedAtOnce(rt: ScriptRuntime, file: string): WarrenError {
  const rss = process.memoryUsage().rss;
  const before = bytesRead();
  const error = refusal(rt, file);
  const read = bytesRead() - before;
  assert.ok(read < 4096, `${file}: ${read} bytes read`);
  assert.ok(process.memoryUsage().rss - rss < 32 * 1024 * 1024, `${file} grew memory`);
  return error;
}

describe('script files: roots, kinds, sizes, no echo', () => {
  it('refuses /dev/zero and /dev/urandom at once, even with /dev as a root', () => {
    for (const roots of [[root], ['/dev']]) {
      const rt = new ScriptRuntime({ roots });
      refusedAtOnce(rt, '/dev/zero');
      refusedAtOnce(rt, '/dev/urandom');
    }
    assert.match(refusal(new ScriptRuntime({ roots: ['/dev'] }), '/dev/zero').message, /not a regular file/);
  });

  it('refuses a FIFO without waiting for a writer, and a directory', () => {
    execFileSync('mkfifo', [join(root, 'fifo.yaml')]);
    mkdirSync(join(root, 'dir.yaml'));
    const rt = new ScriptRuntime({ roots: [root] });
    assert.match(refusedAtOnce(rt, join(root, 'fifo.yaml')).message, /not a regular file/);
    assert.match(refusedAtOnce(rt, join(root, 'dir.yaml')).message, /not a regular file/);
  });

  it('refuses files outside the roots, by path, by `..` and by symlink, and never shows them', () => {
    const rt = new ScriptRuntime({ roots: [root] });
    for (const file of [
      join(outside, 'secret.yaml'),
      join(root, '..', 'outside', 'secret.yaml'),
      join(root, 'link.yaml'),
      join(outside, 'shadow'),
      '/etc/shadow',
    ]) {
      const error = refusal(rt, file);
      assert.match(error.message, /not under an allowed root/);
      assert.ok(!error.message.includes(SECRET), error.message);
    }
  });

  it('files under a root never appear in errors: parse errors give a position, schema errors a place', () => {
    const rt = new ScriptRuntime({ roots: [root] });
    const cases = {
      'bad-yaml.yaml': `steps:\n  - say: "${SECRET}\n  - [: ${SECRET}`,
      'not-a-script': `root:${SECRET}:19000:0:99999:7:::\n`,
      'unknown-key.yaml': `steps: []\n${SECRET}: 1\n`,
      'bad-value.yaml': `steps:\n  - exit: ${SECRET}\n  - sleep: ${SECRET}\n`,
    };
    for (const [name, text] of Object.entries(cases)) {
      writeFileSync(join(root, name), text);
      const error = refusal(rt, join(root, name));
      assert.ok(!error.message.includes(SECRET), `${name}: ${error.message}`);
      assert.ok(!JSON.stringify(error.toJSON()).includes(SECRET), name);
    }
    assert.match(refusal(rt, join(root, 'bad-yaml.yaml')).message, /line \d+, column \d+/);
    assert.match(refusal(rt, join(root, 'bad-value.yaml')).message, /steps\.1\.exit/);
  });

  it('refuses a file over the size cap before reading it', () => {
    writeFileSync(join(root, 'big.yaml'), `steps:\n${'  - say: x\n'.repeat(20_000)}`);
    const rt = new ScriptRuntime({ roots: [root], maxFileBytes: 64 * 1024 });
    assert.match(refusedAtOnce(rt, join(root, 'big.yaml')).message, /the limit is 65536/);
  });

  it('reads a good file under a root', () => {
    const rt = new ScriptRuntime({ roots: [root] });
    rt.validate(spec({ file: join(root, 'good.yaml') }));
    rt.validate(spec({ file: join(root, '.', 'good.yaml') }));
  });
});
