/**
 * A TCP proxy on 127.0.0.1 between a process and its PostgreSQL, for fault tests: `refuse()`
 * ends every connection and refuses new ones (the database unreachable), `blackhole()` keeps
 * every socket open and forwards nothing (a partition: nothing fails, everything waits), and
 * `forward()` heals it (what waited during a blackhole flows on, as TCP would deliver it).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

type Mode = 'forward' | 'refuse' | 'blackhole';

interface Pair {
  client: Socket;
  upstream: Socket | undefined;
}

export class TcpProxy {
  private mode: Mode = 'forward';
  private readonly pairs = new Set<Pair>();
  private constructor(
    private readonly server: Server,
    private readonly target: { host: string; port: number },
  ) {}

  /** Listening on a free loopback port, forwarding to `target`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = createServer((client) => proxy?.accept(client));
    proxy = new TcpProxy(server, target);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** For a postgres:// URL: the same URL through this proxy. */
  static async forUrl(url: string): Promise<{ proxy: TcpProxy; url: string }> {
    const u = new URL(url);
    const proxy = await TcpProxy.start({ host: u.hostname, port: Number(u.port || 5432) });
    u.hostname = '127.0.0.1';
    u.port = String(proxy.port);
    return { proxy, url: u.toString() };
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** Connections open through the proxy now. */
  get open(): number {
    return this.pairs.size;
  }

  private accept(client: Socket): void {
    if (this.mode === 'refuse') {
      client.destroy();
      return;
    }
    const pair: Pair = { client, upstream: undefined };
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      pair.upstream?.destroy();
    };
    client.on('error', end).on('close', end);
    if (this.mode === 'blackhole') client.pause();
    else this.link(pair, end);
  }

  private link(pair: Pair, end: () => void): void {
    const upstream = connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    upstream.on('error', end).on('close', end);
    pair.client.pipe(upstream);
    upstream.pipe(pair.client);
    pair.client.resume();
  }

  /** Every connection ended, new ones refused: the database is unreachable. */
  refuse(): void {
    this.mode = 'refuse';
    for (const p of [...this.pairs]) {
      p.client.destroy();
      p.upstream?.destroy();
    }
    this.pairs.clear();
  }

  /** Sockets stay open, nothing is forwarded either way, new connections wait: a partition. */
  blackhole(): void {
    this.mode = 'blackhole';
    // Unpiped, not only paused: a pipe resumes its source on the destination's 'drain'.
    for (const p of this.pairs) {
      if (p.upstream) {
        p.client.unpipe(p.upstream);
        p.upstream.unpipe(p.client);
        p.upstream.pause();
      }
      p.client.pause();
    }
  }

  /** Forward again; what waited in a blackhole flows on. */
  forward(): void {
    this.mode = 'forward';
    for (const p of this.pairs) {
      if (!p.upstream) {
        this.link(p, () => {
          this.pairs.delete(p);
          p.client.destroy();
          p.upstream?.destroy();
        });
      } else {
        p.client.pipe(p.upstream);
        p.upstream.pipe(p.client);
      }
    }
  }

  async close(): Promise<void> {
    this.refuse();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
