// A real-code corpus for the redaction figures: files read from the repository's own node_modules.
// The synthetic corpus (bench/redaction-corpus.ts) is dense in planted secrets and decoy lines
// (`process.env.X_API_KEY`, `password = os.environ[...]`), a worst case for keyword-prefiltered
// scanners; this one is a realistic, non-synthetic mix of source and documentation (TypeScript
// declarations, the JavaScript of well-known packages, READMEs, package.json files) with no planted
// secrets, so every finding on it is most likely a false positive or a documentation/test fixture.
// node_modules is what every checkout of this repository has after `npm install`: no network, no
// downloaded data. The selection is deterministic for a given install: candidates are sorted by
// path and taken in that order into fixed shares of the target size.
import fs from 'node:fs';
import path from 'node:path';

export interface RealFile {
  /** Path relative to the repository root (e.g. `node_modules/js-yaml/lib/loader.js`). */
  readonly path: string;
  readonly content: string;
  /** Extension with its dot, as secretlint takes it (`.ts` for a `.d.ts`). */
  readonly ext: string;
}

export interface RealCorpusOptions {
  /** Target total size in bytes (UTF-8); default 8 MB. The selection stops at or just under it. */
  readonly targetBytes?: number;
  /** Repository root (the folder holding node_modules); default: found upwards from the cwd. */
  readonly root?: string;
}

const MAX_FILE_BYTES = 1_000_000;
const MAX_LINE = 2000;
const SKIP_DIRS = new Set(['test', 'tests', '__tests__', 'fixtures', '__fixtures__', 'node_modules', '.git']);
const JS_EXT = new Set(['.js', '.mjs', '.cjs']);

/** A category of candidates and its share of the target size. */
interface Category {
  readonly name: string;
  readonly share: number;
  /** Candidate files (absolute paths), per package; interleaved so no package dominates. */
  readonly groups: string[][];
}

function findRoot(): string {
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'node_modules', 'typescript', 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error('real-code corpus: no node_modules with typescript found above the working directory');
  }
}

/** Files under `dir` (recursively, skipping test/fixture folders and nested node_modules) accepted by `keep`, sorted. */
function walk(dir: string, keep: (file: string) => boolean): string[] {
  const out: string[] = [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name.toLowerCase())) out.push(...walk(p, keep));
    } else if (e.isFile() && keep(p)) out.push(p);
  }
  return out.sort();
}

/** Top-level package folders of node_modules (`x`, `@scope/x`), sorted. */
function packages(nm: string): string[] {
  const out: string[] = [];
  for (const name of fs.readdirSync(nm).sort()) {
    if (name.startsWith('.')) continue;
    const p = path.join(nm, name);
    if (name.startsWith('@')) {
      for (const sub of fs.readdirSync(p).sort()) out.push(path.join(p, sub));
    } else out.push(p);
  }
  return out.filter((p) => fs.existsSync(path.join(p, 'package.json')));
}

/** Round-robin over the groups: the first file of each, then the second of each, … */
function interleave(groups: readonly string[][]): string[] {
  const out: string[] = [];
  for (let i = 0; groups.some((g) => i < g.length); i++) for (const g of groups) if (i < g.length) out.push(g[i]!);
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The file's text, or undefined when it is too large, binary, not valid UTF-8 or minified. */
function readText(file: string): string | undefined {
  const st = fs.statSync(file);
  if (st.size === 0 || st.size > MAX_FILE_BYTES) return undefined;
  const buf = fs.readFileSync(file);
  if (buf.includes(0)) return undefined;
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    return undefined;
  }
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    if (end - start > MAX_LINE) return undefined;
    if (nl < 0) break;
    start = nl + 1;
  }
  return text;
}

/**
 * Real files from node_modules, up to `targetBytes` (default 8 MB), sorted by path. Shares of the
 * target: package.json files 5%, Markdown docs 15%, TypeScript declarations 30%, JavaScript sources
 * the rest (including what a smaller category could not fill).
 */
export function buildRealCodeCorpus(options: RealCorpusOptions = {}): RealFile[] {
  const target = options.targetBytes ?? 8_000_000;
  const root = options.root ?? findRoot();
  const nm = path.join(root, 'node_modules');
  const pkgs = packages(nm);
  const at = (...p: string[]) => path.join(nm, ...p);
  // Well-known packages (this repository's dependencies and theirs) with unminified JavaScript.
  const jsPackages = [
    ['js-yaml'],
    ['minimatch'],
    ['mocha', 'lib'],
    ['esbuild', 'lib'],
    ['playwright-core', 'lib'],
    ['typescript', 'lib'],
    ['openai'],
    ['azure-devops-node-api'],
    ['@azure', 'msal-common'],
    ['@azure', 'identity'],
    ['underscore'],
    ['diff'],
    ['ajv'],
    ['jszip'],
    ['parse5'],
    ['commander'],
    ['semver'],
    ['glob'],
    ['@vscode', 'vsce'],
    ['jsonc-parser'],
  ];
  // An ESM twin (`x.mjs` beside `x.js`) is the same code twice: keep the `.js`.
  const isJs = (f: string): boolean => JS_EXT.has(path.extname(f)) && !(f.endsWith('.mjs') && fs.existsSync(f.slice(0, -4) + '.js'));
  const categories: Category[] = [
    { name: 'package.json', share: 0.05, groups: [pkgs.map((p) => path.join(p, 'package.json'))] },
    { name: 'markdown', share: 0.15, groups: [pkgs.flatMap((p) => walk(p, (f) => f.toLowerCase().endsWith('.md')))] },
    {
      name: 'declarations',
      share: 0.3,
      groups: [
        walk(at('typescript', 'lib'), (f) => f.endsWith('.d.ts')),
        walk(at('@types', 'node'), (f) => f.endsWith('.d.ts')),
        walk(at('@types', 'mocha'), (f) => f.endsWith('.d.ts')),
        walk(at('esbuild', 'lib'), (f) => f.endsWith('.d.ts')),
        walk(at('playwright-core'), (f) => f.endsWith('.d.ts')),
      ],
    },
    { name: 'javascript', share: 1, groups: jsPackages.map((p) => walk(at(...p), isJs)) },
  ];

  const chosen: RealFile[] = [];
  const seen = new Set<string>();
  let used = 0;
  for (const c of categories) {
    const budget = Math.min(target, used + c.share * target);
    for (const file of interleave(c.groups)) {
      if (budget - used < 1024) break;
      if (seen.has(file) || !fs.existsSync(file)) continue;
      seen.add(file);
      const content = readText(file);
      if (content === undefined) continue;
      const bytes = Buffer.byteLength(content);
      if (used + bytes > budget) continue; // keep looking for a file that fits
      used += bytes;
      const rel = path.relative(root, file).split(path.sep).join('/');
      chosen.push({ path: rel, content, ext: path.extname(file) });
    }
  }
  return chosen.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
