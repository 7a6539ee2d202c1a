import type {
  ContentBlock,
  PlanEntry,
  SessionConfigOption,
  SessionConfigSelectOption,
  ToolCallContent,
} from '@agentclientprotocol/sdk';

/** What a log event may carry of one agent-supplied value: small ones whole, big ones clipped. */
export function clip(value: unknown, max = 4000): unknown {
  if (value === undefined || value === null) return value;
  if (typeof value === 'string')
    return value.length > max ? `${value.slice(0, max)}… (${value.length} chars)` : value;
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch {
    return String(value);
  }
  if (json === undefined) return undefined;
  return json.length > max ? `${json.slice(0, max)}… (${json.length} chars of JSON)` : value;
}

/** A content block as text: text as is, everything else as a short placeholder. */
export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'resource_link':
      return `[${block.title ?? block.name}](${block.uri})`;
    case 'resource': {
      const r = block.resource as { uri: string; text?: string };
      return typeof r.text === 'string' ? r.text : `[resource ${r.uri}]`;
    }
    case 'image':
      return '[image]';
    case 'audio':
      return '[audio]';
    default:
      return '';
  }
}

/** A tool call's content as one text: its text blocks, diffs and terminals named. */
export function toolContentText(content: ToolCallContent[] | null | undefined): string | undefined {
  if (!content || content.length === 0) return undefined;
  const parts = content.map((c) => {
    if (c.type === 'content') return blockText(c.content);
    if (c.type === 'diff') return `[diff ${c.path}]`;
    if (c.type === 'terminal') return `[terminal ${c.terminalId}]`;
    return '';
  });
  const text = parts.filter((p) => p.length > 0).join('\n');
  return text.length > 0 ? text : undefined;
}

export function planEntries(
  entries: PlanEntry[],
): Array<{ content: string; status: string; priority: string }> {
  return entries.map((e) => ({ content: e.content, status: e.status, priority: e.priority }));
}

/** The choices of a select option, flattened out of their groups. */
export function selectValues(option: SessionConfigOption): SessionConfigSelectOption[] {
  if (option.type !== 'select') return [];
  const out: SessionConfigSelectOption[] = [];
  for (const o of option.options) {
    if ('group' in o) out.push(...o.options);
    else out.push(o);
  }
  return out;
}
