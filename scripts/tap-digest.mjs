// Reads node:test's TAP as it streams and keeps every failed test: its name and the YAML block
// that says why (its stack names the test file). Not the suites around it: with two processes
// at once, `node --test` prints their suites interleaved, so the headers above a result may be
// another process's. Used by scripts/test.mjs.

/** Failures caused only by a failing child are not listed again: the child is. */
const ONLY_CHILDREN = "failureType: 'subtestsFailed'";
/** Enough of a failure's YAML to see why, not a page of stack. */
const MAX_DETAIL_LINES = 24;
const MAX_STACK_LINES = 4;

export function tapDigest() {
  const failures = [];
  let partial = '';
  /** The result whose YAML block is being read: its depth, lines, and what it is. */
  let block;

  const finish = () => {
    if (!block) return;
    const yaml = block.lines.join('\n');
    if (block.failed && !yaml.includes(ONLY_CHILDREN)) {
      const stack = block.lines.findIndex((l) => l.startsWith('stack:'));
      const until = stack < 0 ? MAX_DETAIL_LINES : Math.min(MAX_DETAIL_LINES, stack + 1 + MAX_STACK_LINES);
      const kept = block.lines.slice(0, until);
      if (block.lines.length > kept.length) kept.push('  …');
      failures.push({ name: block.name, detail: `${kept.map((l) => `#     ${l}`).join('\n')}\n` });
    }
    block = undefined;
  };

  const line = (text) => {
    const indent = text.length - text.trimStart().length;
    const body = text.trimStart();
    if (block && !block.open && body === '---' && indent === block.depth * 4 + 2) {
      block.open = true;
      return;
    }
    if (block?.open) {
      if (body === '...' && indent === block.depth * 4 + 2) finish();
      else block.lines.push(text.slice(block.depth * 4 + 2));
      return;
    }
    finish();
    const depth = Math.floor(indent / 4);
    const result = /^(not )?ok \d+ - (.*?)(?: # (?:SKIP|TODO).*)?$/.exec(body);
    if (result) block = { depth, name: result[2], failed: result[1] !== undefined, open: false, lines: [] };
  };

  return {
    write(chunk) {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop();
      for (const l of lines) line(l);
    },
    end() {
      if (partial) line(partial);
      partial = '';
      finish();
      return { failures };
    },
  };
}
