/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for tests: every
 * sample must belong to a family declared by `# TYPE` (histograms through their `_bucket`,
 * `_sum` and `_count` series), label values must be well escaped, values must be numbers.
 * Anything else throws, naming the line.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SUFFIXES: Record<Family['type'], string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = text.slice(i, eq).trim();
    if (!LABEL.test(name)) throw new Error(`bad label name ${name} in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let j = eq + 2;
    let value = '';
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`bad escape in: ${line}`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
    if (name in labels) throw new Error(`label ${name} repeated in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (i < text.length) throw new Error(`expected , between labels in: ${line}`);
  }
  return labels;
}

export function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const help = new Map<string, string>();
  const familyOf = (sample: string): Family | undefined => {
    for (const f of families.values()) {
      for (const s of SUFFIXES[f.type]) if (sample === f.name + s) return f;
    }
    return undefined;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      const rest = line.slice('# HELP '.length);
      const space = rest.indexOf(' ');
      help.set(space < 0 ? rest : rest.slice(0, space), space < 0 ? '' : rest.slice(space + 1));
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      if (!name || !NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      if (!type || !(type in SUFFIXES)) throw new Error(`bad type in: ${line}`);
      if (families.has(name)) throw new Error(`${name} declared twice`);
      families.set(name, { name, type: type as Family['type'], help: help.get(name) ?? '', samples: [] });
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/.exec(line);
    if (!m) throw new Error(`not a sample: ${line}`);
    const family = familyOf(m[1]!);
    if (!family) throw new Error(`sample ${m[1]} has no # TYPE before it`);
    family.samples.push({
      name: m[1]!,
      labels: m[3] ? parseLabels(m[3], line) : {},
      value: parseValue(m[4]!, line),
    });
  }
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Buckets rise with `le`, end at +Inf, and +Inf equals the count, per label set. */
function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  const keyOf = (labels: Record<string, string>) =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([k]) => k !== 'le')
        .sort(),
    );
  for (const s of f.samples) {
    const key = keyOf(s.labels);
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (s.name.endsWith('_bucket')) {
      const le = s.labels.le;
      if (le === undefined) throw new Error(`${f.name}: a bucket without le`);
      entry.buckets.push([parseValue(le, le), s.value]);
    } else if (s.name.endsWith('_count')) entry.count = s.value;
  }
  for (const [key, { buckets, count }] of series) {
    if (buckets.length === 0) throw new Error(`${f.name}${key}: no buckets`);
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]![0] > buckets[i - 1]![0]) || buckets[i]![1] < buckets[i - 1]![1])
        throw new Error(`${f.name}${key}: buckets out of order`);
    }
    const last = buckets.at(-1)!;
    if (last[0] !== Number.POSITIVE_INFINITY) throw new Error(`${f.name}${key}: no +Inf bucket`);
    if (last[1] !== count) throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} != count ${count}`);
  }
}

/** The value of one sample, matching these labels (a subset), summed over the rest; 0 when absent. */
export function sampleValue(
  families: Map<string, Family>,
  sample: string,
  labels: Record<string, string> = {},
): number {
  let sum = 0;
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name !== sample) continue;
      if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
    }
  }
  return sum;
}
