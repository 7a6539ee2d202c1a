/**
 * A stream read to its end as UTF-8 text, refused with `tooBig()` as soon as it passes `max`
 * bytes (what a command takes on stdin: a secret, a workpad).
 */
export async function readCapped(
  stream: NodeJS.ReadableStream,
  max: number,
  tooBig: () => Error,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > max) throw tooBig();
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}
