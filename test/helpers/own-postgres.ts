/**
 * A private PostgreSQL for fault tests and benches (issue 26): Debian's `initdb`/`pg_ctl` in a
 * temp dir, on a free loopback port, trust auth, its unix socket in the temp dir. Stopping,
 * restarting or crashing it disturbs no other test. `OwnPostgres.start()` returns one;
 * `destroy()` stops it (by pid if `pg_ctl` fails) and removes its dir, and a process exit of
 * the caller kills it too. initdb refuses to run as root: as root, every PostgreSQL binary
 * runs as the `postgres` user (or `nobody`) through setpriv.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';

/** The newest installed PostgreSQL's bin dir, or why there is none. */
export function postgresBin(): { bin: string } | { problem: string } {
  const versions = existsSync(PG_ROOT)
    ? readdirSync(PG_ROOT)
        .filter(
          (v) =>
            existsSync(join(PG_ROOT, v, 'bin', 'initdb')) && existsSync(join(PG_ROOT, v, 'bin', 'pg_ctl')),
        )
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    return { problem: `no ${PG_ROOT}/<version>/bin/initdb and pg_ctl (apt-get install postgresql)` };
  return { bin: join(PG_ROOT, versions[0]!, 'bin') };
}

/** As root: the uid/gid the PostgreSQL binaries run as (`postgres` when it exists, else nobody). */
function unprivileged(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return { uid: 65534, gid: 65534 };
  }
}

/**
 * A free loopback port below Linux's ephemeral range (32768–60999): a port the kernel hands out
 * for `listen(0)` is also one it may give the next outgoing connection (the suite makes many,
 * to the shared PostgreSQL) before PostgreSQL has bound it.
 */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const s = createServer();
    const bound = await new Promise<boolean>((r) => {
      s.once('error', () => r(false));
      s.listen(port, '127.0.0.1', () => r(true));
    });
    if (!bound) continue;
    await new Promise<void>((r) => s.close(() => r()));
    return port;
  }
}

export class OwnPostgres {
  private readonly killOnExit = () => this.killPostmaster();

  private constructor(
    private readonly bin: string,
    readonly dir: string,
    readonly port: number,
    private readonly as: { uid: number; gid: number } | undefined,
  ) {}

  /** postgres://postgres@127.0.0.1:<port>/postgres */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  /** initdb, then start it. Throws if the binaries are absent (see `postgresBin`). */
  static async start(): Promise<OwnPostgres> {
    const found = postgresBin();
    if ('problem' in found) throw new Error(found.problem);
    const dir = mkdtempSync(join(tmpdir(), 'warren-own-pg-'));
    const as = unprivileged();
    if (as) chownSync(dir, as.uid, as.gid);
    let pgs = new OwnPostgres(found.bin, dir, await freePort(), as);
    process.once('exit', pgs.killOnExit);
    const logFile = join(dir, 'log');
    const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '');
    try {
      await pgs.exec('initdb', ['-D', pgs.data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
      for (let attempt = 1; ; attempt++) {
        try {
          await pgs.startServer();
          break;
        } catch (error) {
          // Someone took the port between the check and PostgreSQL's bind: another one.
          if (attempt === 3 || !/could not bind|already in use/i.test(log())) throw error;
          process.off('exit', pgs.killOnExit);
          pgs = new OwnPostgres(found.bin, dir, await freePort(), as);
          process.once('exit', pgs.killOnExit);
        }
      }
    } catch (error) {
      // What PostgreSQL said is in its log, which destroy() removes: keep its end in the error.
      const said = log();
      await pgs.destroy();
      if (said && error instanceof Error) error.message += `\n--- its log, last lines ---\n${said}`;
      throw error;
    }
    return pgs;
  }

  /** Run a PostgreSQL binary, as the unprivileged user when we are root. */
  private async exec(tool: string, args: string[], timeoutMs = 60_000): Promise<void> {
    const file = join(this.bin, tool);
    const [cmd, argv] = this.as
      ? ['setpriv', [`--reuid=${this.as.uid}`, `--regid=${this.as.gid}`, '--clear-groups', file, ...args]]
      : [file, args];
    await run(cmd, argv, { timeout: timeoutMs, cwd: this.dir });
  }

  private startServer(): Promise<void> {
    // fsync off: a crash of PostgreSQL (not of the OS) loses nothing the OS had; the tests
    // need a fast database, not a durable disk.
    const opts = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=300',
    ].join(' ');
    return this.exec('pg_ctl', [
      '-D',
      this.data,
      '-l',
      join(this.dir, 'log'),
      '-o',
      opts,
      '-w',
      '-t',
      '60',
      'start',
    ]);
  }

  /** `pg_ctl stop -m <mode>`: fast (end sessions, checkpoint) or immediate (a crash). */
  stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    return this.exec('pg_ctl', ['-D', this.data, '-m', mode, '-w', '-t', '60', 'stop']);
  }

  start(): Promise<void> {
    return this.startServer();
  }

  /** A restart: stopped with `mode`, started again. */
  async restart(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.stop(mode);
    await this.startServer();
  }

  /** Stopped (fast) for `ms`, then started again. */
  async outage(ms: number): Promise<void> {
    await this.stop('fast');
    await sleep(ms);
    await this.startServer();
  }

  /** `pg_terminate_backend` of every client connection but the sweep's own: how many. */
  async terminateAll(): Promise<number> {
    const c = new pg.Client({ connectionString: this.url });
    c.on('error', () => {});
    await c.connect();
    try {
      const r = await c.query<{ n: number }>(
        `select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity
           where backend_type = 'client backend' and pid <> pg_backend_pid()) t`,
      );
      return r.rows[0]!.n;
    } finally {
      await c.end().catch(() => {});
    }
  }

  /** The postmaster's pid from its pid file, if it is running. */
  private postmasterPid(): number | undefined {
    try {
      const pid = Number(readFileSync(join(this.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  private killPostmaster(): void {
    const pid = this.postmasterPid();
    if (!pid) return;
    try {
      // The postmaster's children follow it: they exit when it is gone.
      process.kill(pid, 'SIGKILL');
    } catch {}
  }

  /** Stopped (by pid if pg_ctl cannot) and its dir removed. Safe to call twice. */
  async destroy(): Promise<void> {
    if (this.postmasterPid()) {
      await this.stop('immediate').catch(() => this.killPostmaster());
      this.killPostmaster(); // a pid file left behind names no process, or one pg_ctl missed
    }
    process.off('exit', this.killOnExit);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A suite on its own PostgreSQL: started before it, destroyed after it (failed or not). With
 * no PostgreSQL binaries the suite is skipped with a loud warning, or fails when `CI` is set
 * (as forEachStore does for an unreachable PostgreSQL).
 */
export function describeOwnPostgres(name: string, fn: (db: () => OwnPostgres) => void): void {
  const found = postgresBin();
  if ('problem' in found) {
    const why = `${name}: ${found.problem}`;
    describe(name, () => {
      if (process.env.CI) {
        it('needs PostgreSQL binaries (CI is set, so this is a failure, not a skip)', () => {
          throw new Error(why);
        });
      } else {
        process.stderr.write(`\nWARNING: ${why}: SKIPPED\n\n`);
        it('needs PostgreSQL binaries', { skip: why }, () => {});
      }
    });
    return;
  }
  describe(name, () => {
    let db: OwnPostgres | undefined;
    before(async () => {
      db = await OwnPostgres.start();
    });
    after(async () => {
      await db?.destroy();
    });
    fn(() => {
      if (!db) throw new Error('the suite’s PostgreSQL did not start');
      return db;
    });
  });
}
