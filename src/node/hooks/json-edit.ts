// Minimal text edits of a client's JSON (or JSONC: comments, trailing commas) configuration. The
// installer only ever inserts text, so undoing an install is removing exactly what was inserted and
// the file comes back byte for byte; everything else in the file (keys, entries, comments, layout)
// is left as it was. Pure string work on jsonc-parser's syntax tree: no file system here.
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';

/** One inserted piece of text: at `offset` of the text it was inserted into. */
export interface Insertion {
  readonly offset: number;
  readonly text: string;
}

export type JsonPath = readonly string[];

export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
}

/** Parses `text` as JSONC; a syntax error or a root that is not an object is refused with line:column. */
export function parseConfig(text: string, file: string): Node | undefined {
  if (text.trim() === '') return undefined;
  const errors: ParseError[] = [];
  // A UTF-8 byte order mark (Windows editors) stays in the file; the parser sees a space in its place, so offsets hold.
  const root = parseTree(text.replace(/^\uFEFF/, ' '), errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length) {
    const e = errors[0]!;
    const { line, column } = lineColumn(text, e.offset);
    throw new ConfigFileError(
      `${file}:${line}:${column}: ${printParseErrorCode(e.error)}; fix the file (or move it away) and run the install again: nothing was written`,
    );
  }
  if (!root || root.type !== 'object') throw new ConfigFileError(`${file}: the top level is not a JSON object; nothing was written`);
  return root;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/** The node at `path`, refusing a key that appears twice on the way (clients disagree on which wins). */
export function nodeAt(root: Node | undefined, path: JsonPath, file: string): Node | undefined {
  let node = root;
  for (let i = 0; i < path.length && node; i++) {
    if (node.type !== 'object')
      throw new ConfigFileError(`${file}: \`${path.slice(0, i).join('.')}\` is not an object; nothing was written`);
    const props = (node.children ?? []).filter((p) => p.children?.[0]?.value === path[i]);
    if (props.length > 1)
      throw new ConfigFileError(
        `${file}: the key \`${path.slice(0, i + 1).join('.')}\` appears ${props.length} times; keep one and run the install again: nothing was written`,
      );
    node = props[0]?.children?.[1];
  }
  return node;
}

/** The indentation unit the file uses (its first indented line), else two spaces. */
function indentUnit(text: string): string {
  const m = /\n([ \t]+)\S/.exec(text);
  return m ? (m[1]!.startsWith('\t') ? '\t' : m[1]!.length >= 2 && m[1]!.length <= 8 ? ' '.repeat(Math.min(m[1]!.length, 4)) : '  ') : '  ';
}

/** Leading whitespace of the line `offset` is on. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

function render(value: unknown, indent: string, unit: string): string {
  return JSON.stringify(value, null, unit).replace(/\n/g, `\n${indent}`);
}

/** The insertion that adds `key: value` to the object `obj` (after its last property). */
function propertyInsertion(text: string, obj: Node, key: string, value: unknown): Insertion {
  const unit = indentUnit(text);
  const props = obj.children ?? [];
  if (props.length) {
    const last = props.at(-1)!;
    const indent = lineIndent(text, last.offset);
    return { offset: last.offset + last.length, text: `,\n${indent}${JSON.stringify(key)}: ${render(value, indent, unit)}` };
  }
  const outer = lineIndent(text, obj.offset);
  const indent = outer + unit;
  return { offset: obj.offset + 1, text: `\n${indent}${JSON.stringify(key)}: ${render(value, indent, unit)}\n${outer}` };
}

/** The insertion that appends `value` to the array `arr`. */
function elementInsertion(text: string, arr: Node, value: unknown): Insertion {
  const unit = indentUnit(text);
  const items = arr.children ?? [];
  if (items.length) {
    const last = items.at(-1)!;
    const indent = lineIndent(text, last.offset);
    return { offset: last.offset + last.length, text: `,\n${indent}${render(value, indent, unit)}` };
  }
  const outer = lineIndent(text, arr.offset);
  const indent = outer + unit;
  return { offset: arr.offset + 1, text: `\n${indent}${render(value, indent, unit)}\n${outer}` };
}

export function applyInsertion(text: string, ins: Insertion): string {
  return text.slice(0, ins.offset) + ins.text + text.slice(ins.offset);
}

/** Undoes insertions (newest first); throws when the text there is not what was inserted. */
export function undoInsertions(text: string, insertions: readonly Insertion[]): string {
  let t = text;
  for (const ins of [...insertions].reverse()) {
    if (t.slice(ins.offset, ins.offset + ins.text.length) !== ins.text)
      throw new ConfigFileError('the file does not hold the inserted text where it was inserted');
    t = t.slice(0, ins.offset) + t.slice(ins.offset + ins.text.length);
  }
  return t;
}

export interface EditResult {
  readonly text: string;
  readonly insertions: readonly Insertion[];
  /** Objects/arrays that did not exist and were created to hold the value (outermost first). */
  readonly created: readonly JsonPath[];
}

/** The parsed root object; an empty or whitespace-only text first becomes `{}` (an insertion like any other). */
function withRootObject(
  text: string,
  file: string,
): { text: string; root: NonNullable<ReturnType<typeof parseConfig>>; insertions: Insertion[] } {
  const root = parseConfig(text, file);
  if (root) return { text, root, insertions: [] };
  const start: Insertion = { offset: text.startsWith('\uFEFF') ? 1 : 0, text: '{}\n' };
  const t = applyInsertion(text, start);
  return { text: t, root: parseConfig(t, file)!, insertions: [start] };
}

/**
 * Appends `value` to the array at `path`, creating the array (and the objects above it) when
 * missing. An empty or whitespace-only text becomes `{}` first (recorded as an insertion too).
 */
export function appendElement(text: string, path: JsonPath, value: unknown, file: string): EditResult {
  const { text: t, root, insertions } = withRootObject(text, file);
  const existing = nodeAt(root, path, file);
  if (existing) {
    if (existing.type !== 'array') throw new ConfigFileError(`${file}: \`${path.join('.')}\` is not a list; nothing was written`);
    const ins = elementInsertion(t, existing, value);
    return { text: applyInsertion(t, ins), insertions: [...insertions, ins], created: [] };
  }
  // The deepest object that exists on the path gets one new property holding the rest of the path.
  let depth = path.length - 1;
  let parent = nodeAt(root, path.slice(0, depth), file);
  while (!parent) parent = nodeAt(root, path.slice(0, --depth), file);
  if (parent.type !== 'object')
    throw new ConfigFileError(`${file}: \`${path.slice(0, depth).join('.')}\` is not an object; nothing was written`);
  let nested: unknown = [value];
  for (let i = path.length - 1; i > depth; i--) nested = { [path[i]!]: nested };
  const ins = propertyInsertion(t, parent, path[depth]!, nested);
  const created = path.slice(depth).map((_, i) => path.slice(0, depth + i + 1));
  return { text: applyInsertion(t, ins), insertions: [...insertions, ins], created };
}

/** Sets a top-level `key` to `value` when the object does not have it (Copilot's `version: 1`); undefined when it has. */
export function addPropertyIfAbsent(text: string, key: string, value: unknown, file: string): EditResult | undefined {
  const { text: t, root, insertions } = withRootObject(text, file);
  if (nodeAt(root, [key], file) !== undefined) return undefined;
  const ins = propertyInsertion(t, root, key, value);
  return { text: applyInsertion(t, ins), insertions: [...insertions, ins], created: [] };
}

/** JSON values compared structurally (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The value of a parsed node (jsonc-parser's getNodeValue, without its dependency on offsets). */
export function nodeValue(node: Node): unknown {
  switch (node.type) {
    case 'array':
      return (node.children ?? []).map(nodeValue);
    case 'object':
      return Object.fromEntries((node.children ?? []).map((p) => [p.children![0]!.value as string, nodeValue(p.children![1]!)]));
    default:
      return node.value;
  }
}

/** The elements of the array at `path` (empty when there is none). */
export function elementsAt(text: string, path: JsonPath, file: string): unknown[] {
  const node = nodeAt(parseConfig(text, file), path, file);
  return node?.type === 'array' ? (node.children ?? []).map(nodeValue) : [];
}

/** Removes the `index`-th child of the array or object `container` with the separator that joined it. */
function removeChild(text: string, container: Node, index: number): string {
  const kids = container.children ?? [];
  const child = kids[index]!;
  let from: number;
  let to: number;
  if (index > 0) {
    const prev = kids[index - 1]!;
    from = text.indexOf(',', prev.offset + prev.length);
    to = child.offset + child.length;
  } else if (kids.length > 1) {
    from = child.offset;
    to = kids[1]!.offset;
  } else {
    from = child.offset;
    to = child.offset + child.length;
  }
  return text.slice(0, from) + text.slice(to);
}

/**
 * Removes from the array at `path` every element `matches` accepts (a changed file: the exact
 * undo does not apply). Returns the new text and how many were removed.
 */
export function removeElements(
  text: string,
  path: JsonPath,
  matches: (value: unknown) => boolean,
  file: string,
): { text: string; removed: number } {
  let t = text;
  let removed = 0;
  for (;;) {
    const arr = nodeAt(parseConfig(t, file), path, file);
    if (!arr || arr.type !== 'array') return { text: t, removed };
    const i = (arr.children ?? []).findIndex((c) => matches(nodeValue(c)));
    if (i < 0) return { text: t, removed };
    t = removeChild(t, arr, i);
    removed++;
  }
}

/** Removes the property at `path` when its value is an empty object or array. */
export function removeIfEmpty(text: string, path: JsonPath, file: string): string {
  const root = parseConfig(text, file);
  const node = nodeAt(root, path, file);
  if (!node || (node.type !== 'object' && node.type !== 'array') || (node.children ?? []).length) return text;
  return removeProperty(text, path, file);
}

/** Removes the property at `path` (whatever its value). */
export function removeProperty(text: string, path: JsonPath, file: string): string {
  const root = parseConfig(text, file);
  const parent = path.length === 1 ? root : nodeAt(root, path.slice(0, -1), file);
  if (!parent || parent.type !== 'object') return text;
  const i = (parent.children ?? []).findIndex((p) => p.children?.[0]?.value === path.at(-1));
  return i < 0 ? text : removeChild(text, parent, i);
}

/** Whether the text is an object with no properties and no comments (a file Bulwark created may then go). */
export function isEmptyObject(text: string, file: string): boolean {
  const root = parseConfig(text, file);
  if (!root) return true;
  return (root.children ?? []).length === 0 && !/\/[/*]/.test(text);
}
