// Canonical JSON of an action: object keys sorted by UTF-16 code units at every level, no
// insignificant whitespace (or a fixed indent for display), JSON.stringify's rules for scalars
// (non-finite numbers → null, undefined/functions/symbols dropped in objects and null in arrays,
// `toJSON` honoured). Equal actions give equal text, whatever order the agent wrote the keys in.
// Throws on cycles, BigInt values and nesting deeper than MAX_DEPTH; callers turn that into a block.

export const MAX_DEPTH = 200;

export function canonicalJson(value: unknown, indent = 0): string {
  const out = write(value, 0, indent, new Set());
  if (out === undefined) throw new TypeError('the value has no JSON form');
  return out;
}

function write(value: unknown, depth: number, indent: number, seen: Set<object>): string | undefined {
  if (depth > MAX_DEPTH) throw new RangeError(`nested deeper than ${MAX_DEPTH} levels`);
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string': return JSON.stringify(value);
    case 'number': return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean': return value ? 'true' : 'false';
    case 'bigint': throw new TypeError('BigInt values have no JSON form');
    case 'undefined': case 'function': case 'symbol': return undefined;
  }
  if (value === null) return 'null';
  const obj = value as object;
  if (seen.has(obj)) throw new TypeError('the value contains a cycle');
  seen.add(obj);
  const pad = indent > 0 ? '\n' + ' '.repeat(indent * (depth + 1)) : '';
  const close = indent > 0 ? '\n' + ' '.repeat(indent * depth) : '';
  const colon = indent > 0 ? ': ' : ':';
  let text: string;
  if (Array.isArray(obj)) {
    const items = obj.map((v) => write(v, depth + 1, indent, seen) ?? 'null');
    text = items.length === 0 ? '[]' : `[${items.map((i) => pad + i).join(',')}${close}]`;
  } else {
    const parts: string[] = [];
    for (const key of Object.keys(obj).sort()) {
      const v = write((obj as Record<string, unknown>)[key], depth + 1, indent, seen);
      if (v !== undefined) parts.push(`${pad}${JSON.stringify(key)}${colon}${v}`);
    }
    text = parts.length === 0 ? '{}' : `{${parts.join(',')}${close}}`;
  }
  seen.delete(obj);
  return text;
}
