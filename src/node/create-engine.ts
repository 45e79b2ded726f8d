// Builds an Engine with the Node adapters: real file system, DNS and the tree-sitter shell grammar.
import dns from 'node:dns';
import os from 'node:os';
import { Engine, type Platform, type SsrfPolicy } from '../engine';
import type { ShieldParts } from '../engine/shield/pipeline';
import { nodeFileSystem } from './fs-port';
import { loadShellParser } from './shell-grammar';
import { errorMessage } from '../engine/error-message';

export interface NodeEngineOptions {
  workspaceRoots: string[];
  home?: string;
  selfPaths?: string[];
  platform?: Platform;
  /** Resolve host names for the SSRF check (default true). */
  resolve?: boolean;
  ssrfPolicy?: SsrfPolicy;
  shield?: ShieldParts;
  /** More roots reads may come from without a review (the workspace boundary). */
  extraReadRoots?: readonly string[];
}

export function currentPlatform(): Platform {
  return process.platform === 'win32' ? 'win32' : process.platform === 'darwin' ? 'darwin' : 'linux';
}

export async function resolveHostAll(host: string): Promise<string[]> {
  const found = await dns.promises.lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
}

/**
 * The shell grammar is loaded here; if it fails to load, the engine still starts and blocks every
 * command with a reason (fail closed) instead of refusing all other actions too.
 */
export async function createNodeEngine(o: NodeEngineOptions): Promise<{ engine: Engine; shellError?: string }> {
  let shellParser;
  let shellError: string | undefined;
  try {
    shellParser = await loadShellParser();
  } catch (e) {
    shellError = errorMessage(e);
  }
  const engine = new Engine({
    platform: o.platform ?? currentPlatform(),
    home: o.home ?? os.homedir(),
    workspaceRoots: o.workspaceRoots,
    selfPaths: o.selfPaths,
    fs: nodeFileSystem,
    shellParser,
    resolveHost: o.resolve === false ? undefined : resolveHostAll,
    ssrfPolicy: o.ssrfPolicy,
    shield: o.shield,
    ...(o.extraReadRoots?.length ? { boundary: { extraReadRoots: o.extraReadRoots } } : {}),
  });
  return { engine, shellError };
}
