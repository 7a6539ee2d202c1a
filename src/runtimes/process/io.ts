/** The last bytes of a stream: what a crash report shows. */
export class Tail {
  private buf = '';
  constructor(private readonly max = 4096) {}
  push(chunk: string): void {
    this.buf = (this.buf + chunk).slice(-this.max);
  }
  toString(): string {
    return this.buf;
  }
}

/** Split a byte stream into lines. */
export function onLines(stream: NodeJS.ReadableStream, fn: (line: string) => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    rest += chunk;
    let i = rest.indexOf('\n');
    while (i >= 0) {
      const line = rest.slice(0, i).replace(/\r$/, '');
      rest = rest.slice(i + 1);
      fn(line);
      i = rest.indexOf('\n');
    }
  });
  stream.on('end', () => {
    if (rest) fn(rest);
    rest = '';
  });
}
