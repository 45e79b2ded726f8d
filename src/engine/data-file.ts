// Loading user-editable YAML data (policies) with exact error locations: a syntax or schema
// error is reported as file:line:column, never silently half-loaded.
import { EVENT_ID, YAMLException, getScalarValue, load, parseEvents } from 'js-yaml';
import Ajv, { type ErrorObject } from 'ajv';
import { errorMessage } from './error-message';

export interface SourcePosition {
  readonly line: number; // 1-based
  readonly column: number; // 1-based
}

export class DataFileError extends Error {
  override readonly name = 'DataFileError';
  constructor(
    readonly file: string,
    readonly position: SourcePosition | undefined,
    readonly detail: string,
  ) {
    super(`${file}${position ? `:${position.line}:${position.column}` : ''}: ${detail}`);
  }
}

/** Largest data file accepted: policies are small; a huge one is an error, not a stall. */
export const MAX_DATA_FILE_BYTES = 1024 * 1024;

export interface LoadedYaml {
  readonly value: unknown;
  /** Position of the node at a JSON pointer (`/deny/0/paths`), or of its nearest ancestor. */
  positionOf(pointer: string): SourcePosition | undefined;
}

export function loadYamlWithPositions(text: string, file: string): LoadedYaml {
  if (text.length > MAX_DATA_FILE_BYTES) throw new DataFileError(file, undefined, `file is larger than ${MAX_DATA_FILE_BYTES} bytes`);
  if (text.trim() === '') throw new DataFileError(file, { line: 1, column: 1 }, 'the file is empty');
  let value: unknown;
  try {
    value = load(text, { filename: file, maxAliases: 100 });
  } catch (e) {
    if (e instanceof YAMLException && /input is empty/.test(e.reason))
      throw new DataFileError(file, { line: 1, column: 1 }, 'the file is empty');
    if (e instanceof YAMLException && e.mark) throw new DataFileError(file, { line: e.mark.line + 1, column: e.mark.column + 1 }, e.reason);
    throw new DataFileError(file, undefined, errorMessage(e));
  }
  const offsets = pointerOffsets(text);
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const toPosition = (offset: number): SourcePosition => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - lineStarts[lo]! + 1 };
  };
  return {
    value,
    positionOf(pointer: string) {
      for (let p = pointer; ; p = p.slice(0, p.lastIndexOf('/'))) {
        const o = offsets.get(p);
        if (o !== undefined) return toPosition(o);
        if (p === '') return undefined;
      }
    },
  };
}

/** JSON pointer → source offset of every node, from the parser's event stream. */
function pointerOffsets(text: string): Map<string, number> {
  const out = new Map<string, number>();
  type Frame = { kind: 'map' | 'seq'; path: string; index: number; key?: string; expectKey: boolean };
  const stack: Frame[] = [];
  const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
  // Returns the pointer of the node that starts now, or undefined for a mapping key.
  const place = (): string | undefined => {
    const top = stack[stack.length - 1];
    if (!top) return '';
    if (top.kind === 'seq') return `${top.path}/${top.index++}`;
    if (top.expectKey) return undefined;
    top.expectKey = true;
    return `${top.path}/${escape(top.key ?? '')}`;
  };
  let events;
  try {
    events = parseEvents(text, {});
  } catch {
    return out;
  }
  for (const e of events) {
    switch (e.type) {
      case EVENT_ID.MAPPING:
      case EVENT_ID.SEQUENCE: {
        const path = place() ?? '';
        out.set(path, e.start);
        stack.push({ kind: e.type === EVENT_ID.MAPPING ? 'map' : 'seq', path, index: 0, expectKey: true });
        break;
      }
      case EVENT_ID.SCALAR: {
        const top = stack[stack.length - 1];
        if (top && top.kind === 'map' && top.expectKey) {
          top.key = getScalarValue(text, e);
          top.expectKey = false;
          out.set(`${top.path}/${escape(top.key)}`, e.valueStart); // the key's own line, overwritten by the value below
          break;
        }
        const path = place();
        if (path !== undefined) out.set(path, e.valueStart);
        break;
      }
      case EVENT_ID.ALIAS:
        place();
        break;
      case EVENT_ID.POP:
        stack.pop();
        break;
      default:
        break;
    }
  }
  return out;
}

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<object, ReturnType<typeof ajv.compile>>();

/** Validates against a JSON schema; the first error (deepest location) becomes a DataFileError. */
export function validateAgainstSchema(loaded: LoadedYaml, schema: object, file: string): void {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  if (validate(loaded.value)) return;
  // Deepest location first; at the same place an unknown field (usually a typo) explains more than what is then missing.
  const weight = (e: ErrorObject) => e.instancePath.split('/').length * 2 + (e.keyword === 'additionalProperties' ? 1 : 0);
  const errors = [...(validate.errors ?? [])].sort((a, b) => weight(b) - weight(a));
  const first = pickMostUseful(errors);
  throw new DataFileError(file, loaded.positionOf(first.instancePath), describe(first));
}

function pickMostUseful(errors: ErrorObject[]): ErrorObject {
  // `anyOf`/`oneOf` summaries say little; prefer a concrete error at the same or deeper path.
  return errors.find((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && e.keyword !== 'if') ?? errors[0]!;
}

function describe(e: ErrorObject): string {
  const where = e.instancePath ? `\`${e.instancePath.slice(1).replace(/\//g, '.')}\`` : 'the document';
  switch (e.keyword) {
    case 'additionalProperties':
      return `${where} has an unknown field \`${(e.params as { additionalProperty: string }).additionalProperty}\``;
    case 'required':
      return `${where} is missing the field \`${(e.params as { missingProperty: string }).missingProperty}\``;
    case 'enum':
      return `${where} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${where} ${e.message ?? 'is invalid'}`;
  }
}
