// Finds the line and column of a node in a YAML text, given its path of keys and indices
// (["sources", 3, "sensitivity"]). js-yaml reports positions only for syntax errors, so schema
// errors are located by a tolerant scan of the text: block mappings and sequences by indentation,
// flow collections (`[a, b]`, `{ k: v }`) on one line by a small bracket-aware scanner. When a
// step cannot be followed (multi-line flow collections, aliases, unusual layouts) the position
// of the deepest node found is returned, so an error always points at least at its parent.

export type YamlPath = readonly (string | number)[];
/** Zero-based position. */
export interface TextPosition {
  readonly line: number;
  readonly column: number;
}

interface Region {
  start: number;
  end: number;
  col: number;
} // lines [start, end), children at column col (-1: first content line's indent)
interface Found {
  key: TextPosition;
  value: TextPosition;
  region?: Region;
  inline?: boolean;
}

const isContent = (line: string): boolean => !/^\s*(#.*)?$/.test(line) && !/^(---|\.\.\.)\s*$/.test(line);
const indentOf = (line: string): number => line.length - line.trimStart().length;

function childCol(lines: readonly string[], r: Region): number {
  if (r.col >= 0) return r.col;
  for (let l = r.start; l < r.end; l++) if (isContent(lines[l]!)) return indentOf(lines[l]!);
  return -1;
}

const KEY = /^(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|([^\s#'"\-[{][^#]*?|-[^\s#][^#]*?))\s*:(?=\s|$)/;

/** Text after a key's colon that is a value of its own (not just an anchor, tag or comment). */
function inlineValueStart(line: string, from: number): number {
  let i = from;
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (i >= line.length || line[i] === '#') return -1;
    if (line[i] === '&' || line[i] === '!') {
      while (i < line.length && !/\s/.test(line[i]!)) i++;
      continue;
    }
    return i;
  }
  return -1;
}

function blockChild(lines: readonly string[], from: number, end: number, col: number): Region {
  let l = from;
  for (; l < end; l++) {
    const line = lines[l]!;
    if (!isContent(line)) continue;
    const ind = indentOf(line);
    if (ind < col || (ind === col && line[col] !== '-')) break;
  }
  return { start: from, end: l, col: -1 };
}

function findKey(lines: readonly string[], r: Region, key: string): Found | undefined {
  const col = childCol(lines, r);
  if (col < 0) return undefined;
  for (let l = r.start; l < r.end; l++) {
    const line = lines[l]!;
    if (!isContent(line) || line.length <= col || line[col] === ' ') continue;
    if (!/^[ -]*$/.test(line.slice(0, col))) continue;
    const m = KEY.exec(line.slice(col));
    if (!m) continue;
    const name = m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2] !== undefined ? m[2].replace(/''/g, "'") : m[3]!;
    if (name !== key) continue;
    const keyPos = { line: l, column: col };
    const v = inlineValueStart(line, col + m[0].length);
    if (v >= 0) return { key: keyPos, value: { line: l, column: v }, inline: true };
    const region = blockChild(lines, l + 1, r.end, col);
    let first = region.start;
    while (first < region.end && !isContent(lines[first]!)) first++;
    const value = first < region.end ? { line: first, column: indentOf(lines[first]!) } : keyPos;
    return { key: keyPos, value, region };
  }
  return undefined;
}

function findItem(lines: readonly string[], r: Region, n: number): Found | undefined {
  const col = childCol(lines, r);
  if (col < 0) return undefined;
  const items: number[] = [];
  for (let l = r.start; l < r.end; l++) {
    const line = lines[l]!;
    if (
      isContent(line) &&
      line[col] === '-' &&
      /^[ -]*$/.test(line.slice(0, col)) &&
      (line.length === col + 1 || /\s/.test(line[col + 1]!))
    )
      items.push(l);
  }
  const l = items[n];
  if (l === undefined) return undefined;
  const end = items[n + 1] ?? r.end;
  const line = lines[l]!;
  const pos = { line: l, column: col };
  const v = inlineValueStart(line, col + 1);
  if (v < 0) return { key: pos, value: pos, region: { start: l + 1, end, col: -1 } };
  const value = { line: l, column: v };
  if (line[v] === '[' || line[v] === '{') return { key: pos, value, inline: true };
  return { key: pos, value, region: { start: l, end, col: v } };
}

interface FlowEntry {
  key?: string;
  keyCol: number;
  valueCol: number;
}

/** Top-level entries of the flow collection that opens at `open` (`[` or `{`) on one line. */
function flowEntries(s: string, open: number): FlowEntry[] {
  const out: FlowEntry[] = [];
  let depth = 0;
  let start = open + 1;
  let colon = -1;
  const push = (endAt: number): void => {
    let k = start;
    while (k < endAt && /\s/.test(s[k]!)) k++;
    if (k >= endAt) return;
    if (colon < 0) {
      out.push({ keyCol: k, valueCol: k });
      return;
    }
    let v = colon + 1;
    while (v < endAt && /\s/.test(s[v]!)) v++;
    out.push({
      key: s
        .slice(k, colon)
        .trim()
        .replace(/^(["'])(.*)\1$/, '$2'),
      keyCol: k,
      valueCol: v,
    });
  };
  for (let i = open + 1; i < s.length; i++) {
    const c = s[i]!;
    if (c === '"' || c === "'") {
      for (i++; i < s.length && s[i] !== c; i++) if (c === '"' && s[i] === '\\') i++;
    } else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      if (depth === 0) {
        push(i);
        return out;
      }
      depth--;
    } else if (c === ',' && depth === 0) {
      push(i);
      start = i + 1;
      colon = -1;
    } else if (c === ':' && depth === 0 && colon < 0 && /[\s,\]}]/.test(s[i + 1] ?? ' ')) colon = i;
  }
  push(s.length);
  return out;
}

function flowLocate(line: string, lineNo: number, col: number, rest: YamlPath, at: 'key' | 'value'): TextPosition {
  let pos: TextPosition = { line: lineNo, column: col };
  for (let i = 0; i < rest.length; i++) {
    if (line[col] !== '[' && line[col] !== '{') break;
    const seg = rest[i]!;
    const entries = flowEntries(line, col);
    const e = typeof seg === 'number' ? entries[seg] : entries.find((x) => x.key === seg);
    if (!e) break;
    const last = i === rest.length - 1;
    pos = { line: lineNo, column: last && at === 'key' ? e.keyCol : e.valueCol };
    col = e.valueCol;
  }
  return pos;
}

/**
 * Zero-based position of the node at `path` (`at: 'key'` points at a mapping key, `value` at its
 * value), or of the deepest ancestor that could be found.
 */
export function locateYamlPath(text: string, path: YamlPath, at: 'key' | 'value' = 'value'): TextPosition {
  const lines = text.split(/\r\n|\n|\r/);
  let region: Region = { start: 0, end: lines.length, col: -1 };
  let pos: TextPosition = { line: 0, column: 0 };
  for (let l = 0; l < lines.length; l++)
    if (isContent(lines[l]!)) {
      pos = { line: l, column: indentOf(lines[l]!) };
      break;
    }
  for (let i = 0; i < path.length; i++) {
    const seg = path[i]!;
    const found = typeof seg === 'number' ? findItem(lines, region, seg) : findKey(lines, region, seg);
    if (!found) break;
    const last = i === path.length - 1;
    pos = last && at === 'key' ? found.key : found.value;
    if (found.inline) {
      if (!last) pos = flowLocate(lines[found.value.line]!, found.value.line, found.value.column, path.slice(i + 1), at);
      break;
    }
    if (!found.region) break;
    region = found.region;
  }
  return pos;
}
