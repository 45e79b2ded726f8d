// Reads JSON lines from a byte stream: strict UTF-8, a size cap per line, and one error per bad
// line so that the rest are still processed.
import { parseJson } from '../engine/patch/jsonc';
export type JsonLine = { lineNumber: number; value: unknown } | { lineNumber: number; error: string; id?: unknown };

/** Longest accepted line; a longer one is reported and skipped, never buffered whole. */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

export async function* readJsonLines(stream: AsyncIterable<Buffer | string>): AsyncGenerator<JsonLine> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let oversized = false;
  let lineNumber = 0;
  const finish = (): JsonLine | undefined => {
    lineNumber++;
    const bytes = Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    if (oversized) {
      oversized = false;
      return { lineNumber, error: `line longer than ${MAX_LINE_BYTES} bytes` };
    }
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      return { lineNumber, error: 'invalid UTF-8' };
    }
    if (text.trim() === '') return undefined;
    try {
      return { lineNumber, value: JSON.parse(text) };
    } catch {
      return { lineNumber, error: `invalid JSON (${jsonSyntaxError(text)})` };
    }
  };
  for await (const chunk of stream) {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let nl: number;
    while ((nl = buf.indexOf(0x0a)) !== -1) {
      append(buf.subarray(0, nl));
      const line = finish();
      if (line) yield line;
      buf = buf.subarray(nl + 1);
    }
    append(buf);
  }
  if (pendingBytes > 0 || oversized) {
    const line = finish();
    if (line) yield line;
  }
  function append(b: Buffer): void {
    if (oversized || b.length === 0) return;
    if (pendingBytes + b.length > MAX_LINE_BYTES) {
      oversized = true;
      pending = [];
      pendingBytes = 0;
      return;
    }
    pending.push(Buffer.from(b));
    pendingBytes += b.length;
  }
}

/**
 * Where `text` stops being JSON, by position only. JSON.parse's own message quotes the input
 * around the error, and the input may hold a secret (an API key in a malformed action).
 */
export function jsonSyntaxError(text: string): string {
  return parseJson(text, 'json') ?? 'not valid JSON';
}
