// Canonical JSON of an action: the Tier 2 cache key and the data shown to the evaluator. RFC 8785
// (JCS) by `canonicalize`, the implementation the audit log hashes with: object keys sorted by
// UTF-16 code units at every level, no insignificant whitespace. Equal actions give equal text,
// whatever order the agent wrote the keys in. The value first takes JSON's own form
// (JSON.stringify: `toJSON` honoured, undefined/functions/symbols dropped in objects and null in
// arrays, non-finite numbers → null). Throws on cycles, BigInt values, lone surrogates (JCS has no
// form for them) and nesting deeper than MAX_DEPTH; callers turn that into a block.
import canonicalize from 'canonicalize';
import { applyEdits, format } from 'jsonc-parser';

export const MAX_DEPTH = 200;

/** `indent` > 0: the same text laid out for reading (jsonc-parser's formatter, as JSON.stringify indents). */
export function canonicalJson(value: unknown, indent = 0): string {
  const compact = canonicalize(jsonForm(value));
  if (compact === undefined) throw new TypeError('the value has no JSON form');
  if (indent <= 0) return compact;
  return applyEdits(compact, format(compact, undefined, { tabSize: indent, insertSpaces: true, eol: '\n' }));
}

function jsonForm(value: unknown): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    if (e instanceof TypeError && /circular/i.test(e.message)) throw new TypeError('the value contains a cycle');
    throw e;
  }
  if (text === undefined) throw new TypeError('the value has no JSON form');
  const plain: unknown = JSON.parse(text);
  // The depth bound of the form that is hashed and shown (every value counts, the root is level 0).
  const stack: [unknown, number][] = [[plain, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (depth > MAX_DEPTH) throw new RangeError(`nested deeper than ${MAX_DEPTH} levels`);
    if (v !== null && typeof v === 'object') for (const x of Object.values(v)) stack.push([x, depth + 1]);
  }
  return plain;
}
