// Classification of paths by a policy's source rules, and the sink category of an action type.
//
// Matching: every criterion a source gives must hold (`basename_not_in` excludes); a source with
// no criteria matches every path; the first matching source wins. Basenames, paths and the
// criteria are compared in lower case, so case never lowers a classification. A path is checked
// in a few spellings (as given with `\` read as `/`, lexically normalised, and with Windows'
// ignored trailing dots/spaces and NTFS stream suffix removed); the most sensitive result wins,
// so a spelling trick can only raise the sensitivity, never lower it.
import { MATCH_CRITERIA, SENSITIVITIES, sensitivityRank, type Classification, type IfcPolicy, type IfcSource } from './types';

/** Classification of paths no source rule matches (a policy without a catch-all). */
export const UNCLASSIFIED = 'unclassified';

/** Classification of a file read whose content was found to be public material only (IfcTouched.publicMaterial). */
export const PUBLIC_MATERIAL = 'public_material';

interface PathKey {
  readonly path: string;
  readonly slashed: string;
  readonly base: string;
}
type Test = (k: PathKey) => boolean;
interface CompiledSource {
  readonly source: IfcSource;
  readonly test: Test;
}
interface Compiled {
  readonly sources: readonly CompiledSource[];
  readonly sinkByType: ReadonlyMap<string, string>;
}

const compiledPolicies = new WeakMap<IfcPolicy, Compiled>();

function compileSource(source: IfcSource): CompiledSource {
  const tests: Test[] = [];
  const lower = (xs: readonly string[]): string[] => xs.map((x) => x.toLowerCase());
  for (const c of MATCH_CRITERIA) {
    const given = source.match[c];
    if (!given) continue;
    const xs = lower(given);
    switch (c) {
      case 'basename_in': {
        const set = new Set(xs);
        tests.push((k) => set.has(k.base));
        break;
      }
      case 'basename_not_in': {
        const set = new Set(xs);
        tests.push((k) => !set.has(k.base));
        break;
      }
      case 'basename_suffix_in':
        tests.push((k) => xs.some((s) => k.base.endsWith(s)));
        break;
      case 'basename_contains':
        tests.push((k) => xs.some((s) => k.base.includes(s)));
        break;
      // A directory named in path_contains also matches the directory itself (`/home/u/.ssh`).
      case 'path_contains':
        tests.push((k) => xs.some((s) => k.slashed.includes(s)));
        break;
      case 'path_in': {
        const set = new Set(xs.map(trimSlash));
        tests.push((k) => set.has(k.path));
        break;
      }
    }
  }
  return { source, test: (k) => tests.every((t) => t(k)) };
}

function compiled(policy: IfcPolicy): Compiled {
  let c = compiledPolicies.get(policy);
  if (!c) {
    const sinkByType = new Map<string, string>();
    for (const [cat, types] of Object.entries(policy.sinks)) for (const t of types) if (!sinkByType.has(t)) sinkByType.set(t, cat);
    c = { sources: policy.sources.map(compileSource), sinkByType };
    compiledPolicies.set(policy, c);
  }
  return c;
}

const trimSlash = (p: string): string => (p.length > 1 ? p.replace(/\/+$/, '') || '/' : p);

function keyOf(path: string): PathKey {
  const p = trimSlash(path);
  return { path: p, slashed: p.endsWith('/') ? p : p + '/', base: p.slice(p.lastIndexOf('/') + 1) };
}

/** The spellings of one path that are classified (see the file comment). */
export function pathVariants(absolutePath: string): string[] {
  let p = absolutePath.replace(/\\/g, '/').toLowerCase();
  if (!p.startsWith('/') && !/^[a-z]:\//.test(p)) p = '/' + p; // relative: let `/dir/` criteria still see the first component
  p = p.replace(/\/{2,}/g, '/');
  const out = new Set<string>([p]);
  const segs: string[] = [];
  for (const s of p.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') {
      if (segs.length > (/^[a-z]:$/.test(segs[0] ?? '') ? 1 : 0)) segs.pop();
      continue;
    }
    segs.push(s);
  }
  const lexical = (/^[a-z]:$/.test(segs[0] ?? '') ? '' : '/') + segs.join('/') || '/';
  out.add(lexical);
  const win = lexical
    .replace(/(?<=[^/]):[^/]*$/, '') // NTFS stream on the last component (`.env::$DATA`)
    .split('/')
    .map((seg) => seg.replace(/[. ]+$/, (m) => (m === seg ? m : ''))) // trailing dots/spaces (keep `.` and `..`)
    .join('/');
  if (win !== '' && !/^[a-z]:$/.test(win)) out.add(win);
  return [...out];
}

function classifyKey(c: Compiled, key: PathKey): Classification {
  for (const s of c.sources) if (s.test(key)) return { sensitivity: s.source.sensitivity, source: s.source.name };
  return { sensitivity: SENSITIVITIES[0], source: UNCLASSIFIED };
}

/** Sensitivity of one path and the source rule that decided it (the most sensitive of its spellings). */
export function classifyPath(policy: IfcPolicy, absolutePath: string): Classification {
  if (typeof absolutePath !== 'string') throw new TypeError(`IFC: a path must be a string, not ${typeof absolutePath}`);
  const c = compiled(policy);
  let best: Classification | undefined;
  for (const v of pathVariants(absolutePath)) {
    const r = classifyKey(c, keyOf(v));
    if (!best || sensitivityRank(r.sensitivity) > sensitivityRank(best.sensitivity)) best = r;
  }
  return best!;
}

/** True when the criteria of `source` alone hold for the path (ignoring the sources before it). */
export function sourceMatches(source: IfcSource, absolutePath: string): boolean {
  const s = compileSource(source);
  return pathVariants(absolutePath).some((v) => s.test(keyOf(v)));
}

/** The sink category of an action type, or undefined when it is in none (then IFC allows it). */
export function sinkOf(policy: IfcPolicy, actionType: string): string | undefined {
  return compiled(policy).sinkByType.get(actionType);
}
