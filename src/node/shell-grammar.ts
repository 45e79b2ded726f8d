// Loads web-tree-sitter and the bash grammar (WebAssembly, no native build) for the shell analyser.
// Loaded once per process; any failure is an Error with a clear message so callers can fail closed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Language as LanguageT, Parser as ParserT } from 'web-tree-sitter';
import type { ShellParser } from '../engine/shell/analyze';

type WebTreeSitter = { Parser: typeof ParserT; Language: typeof LanguageT };

/** A parse taking longer than this is cancelled (the analyser then reports the command opaque). */
const PARSE_BUDGET_MS = 2000;

export interface GrammarPaths {
  /** web-tree-sitter's runtime (`web-tree-sitter.wasm`). */
  runtimeWasm?: string;
  /** The bash grammar (`tree-sitter-bash.wasm`). */
  grammarWasm?: string;
}

let cached: Promise<ShellParser> | undefined;
/** The runtime is initialised once per process: re-initialising would invalidate live parsers. */
let runtime: Promise<WebTreeSitter> | undefined;

/**
 * The first existing candidate: beside the running bundle (esbuild copies the wasm files into
 * dist/ and out/…), then the installed package.
 */
function findAsset(file: string, packageSpecifier: string, explicit?: string): string {
  if (explicit !== undefined) {
    if (!fs.existsSync(explicit)) throw new Error(`cannot find ${file} at ${explicit}`);
    return explicit;
  }
  const tried: string[] = [];
  const beside = path.join(__dirname, file);
  tried.push(beside);
  if (fs.existsSync(beside)) return beside;
  try {
    const resolved = require.resolve(packageSpecifier);
    tried.push(resolved);
    if (fs.existsSync(resolved)) return resolved;
  } catch (e) {
    tried.push(`${packageSpecifier} (${(e as Error).message.split('\n')[0]})`);
  }
  throw new Error(`cannot find ${file}; looked in: ${tried.join(', ')}`);
}

async function initRuntime(runtimeWasm: string): Promise<WebTreeSitter> {
  let wts: WebTreeSitter;
  try {
    // require(), not import: the bundles are CommonJS and must get the package's CJS build.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    wts = require('web-tree-sitter') as WebTreeSitter;
  } catch (e) {
    throw new Error(`cannot load web-tree-sitter: ${(e as Error).message}`);
  }
  try {
    await wts.Parser.init({ locateFile: () => runtimeWasm });
  } catch (e) {
    throw new Error(`cannot initialise web-tree-sitter from ${runtimeWasm}: ${(e as Error).message}`);
  }
  return wts;
}

/** A new bash parser (uncached). Rejects with a message naming the file that failed. */
export async function createShellParser(paths: GrammarPaths = {}): Promise<ShellParser> {
  const runtimeWasm = findAsset('web-tree-sitter.wasm', 'web-tree-sitter/web-tree-sitter.wasm', paths.runtimeWasm);
  const grammarWasm = findAsset('tree-sitter-bash.wasm', 'tree-sitter-bash/tree-sitter-bash.wasm', paths.grammarWasm);
  if (!runtime) {
    runtime = initRuntime(runtimeWasm);
    runtime.catch(() => {
      runtime = undefined;
    });
  }
  const wts = await runtime;
  let language: LanguageT;
  try {
    language = await wts.Language.load(new Uint8Array(fs.readFileSync(grammarWasm)));
  } catch (e) {
    throw new Error(`cannot load the bash grammar from ${grammarWasm}: ${(e as Error).message}`);
  }
  const parser = new wts.Parser();
  parser.setLanguage(language);
  return {
    parse(text: string) {
      const deadline = Date.now() + PARSE_BUDGET_MS;
      // Returning true from the progress callback cancels the parse (parse() then returns null).
      return parser.parse(text, null, { progressCallback: () => Date.now() > deadline });
    },
  };
}

/** The shared bash parser; loads the grammar on first use. */
export function loadShellParser(): Promise<ShellParser> {
  if (!cached) {
    cached = createShellParser();
    // A failed load is not cached: a later call may succeed (e.g. after a file was restored).
    cached.catch(() => {
      cached = undefined;
    });
  }
  return cached;
}
