// Reads node:test's TAP as it streams and keeps two things: every failed test (its path of
// suite names and the YAML block that says why), and each top-level test file's duration (the
// shards name a file's suite for its path). Used by scripts/test.mjs.

/** Failures caused only by a failing child are not listed again: the child is. */
const ONLY_CHILDREN = "failureType: 'subtestsFailed'";
/** Enough of a failure's YAML to see why, not a page of stack. */
const MAX_DETAIL_LINES = 24;
const MAX_STACK_LINES = 4;

export function tapDigest() {
  const names = [];
  const failures = [];
  const files = {};
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
      failures.push({ path: block.path, detail: `${kept.map((l) => `#     ${l}`).join('\n')}\n` });
    }
    const ms = /^\s*duration_ms: ([\d.]+)/m.exec(yaml);
    if (block.depth === 0 && block.path[0].endsWith('.test.ts') && ms)
      files[block.path[0]] = Number(ms[1]) / 1000;
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
    const subtest = /^# Subtest: (.*)$/.exec(body);
    if (subtest) {
      names.length = depth;
      names[depth] = subtest[1];
      return;
    }
    const result = /^(not )?ok \d+ - (.*?)(?: # (?:SKIP|TODO).*)?$/.exec(body);
    if (result) {
      const path = [...names.slice(0, depth), names[depth] ?? result[2]];
      block = { depth, path, failed: result[1] !== undefined, open: false, lines: [] };
    }
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
      return { failures, files };
    },
  };
}
