// The Tier 2 evaluator's host side: where its back end comes from (the OpenAI-compatible one from the
// settings and API key), the workspace canary file, and the stand-in for a back end that is chosen but
// cannot be used (it gives the verdicts the evaluator would: block, or escalate when opted in).
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ActionView, TierVerdict } from '../engine/shield/types';
import { generateCanary, isValidCanary, type ChatBackend } from '../engine/shield/tier2';
import type { HostSettings } from './host-settings';
import { OpenAIChatBackend } from './openai-chat';
import { ensureDirSync } from './fs-util';
import { errorMessage } from '../engine/error-message';

export const CANARY_FILE = 'canary.token';

/**
 * The workspace canary in `<stateDir>/canary.token` (mode 0600): read it, or create it once with 32
 * random bytes. A file that exists but does not hold 64 hex characters is an error (it is never
 * silently replaced; deleting it makes a new one).
 */
export function loadOrCreateCanary(stateDir: string, random: (n: number) => Uint8Array = (n) => randomBytes(n)): string {
  const file = path.join(stateDir, CANARY_FILE);
  ensureDirSync(stateDir, 0o700);
  const read = (): string => {
    const c = fs.readFileSync(file, 'utf8').trim();
    if (!isValidCanary(c))
      throw new Error(`${file} does not hold a valid Tier 2 canary (64 hex characters); delete the file to generate a new one`);
    try {
      if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
    } catch {
      /* best effort */
    }
    return c;
  };
  if (fs.existsSync(file)) return read();
  const canary = generateCanary(random);
  try {
    fs.writeFileSync(file, `${canary}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    // Another window created it first: use theirs.
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return read();
    throw new Error(`cannot create the Tier 2 canary file ${file}: ${errorMessage(e)}`);
  }
  return canary;
}

/** What the Tier 2 back end is, as the caller could set it up. */
export type Tier2Source =
  | { readonly kind: 'none' }
  | { readonly kind: 'backend'; readonly backend: ChatBackend }
  /** Chosen but not usable yet (no API key, no model selector): "unavailable" (block, or Tier 3 if opted in). */
  | { readonly kind: 'not_configured'; readonly why: string }
  /** Chosen but wrong (bad URL, plain http to a remote host): always blocks. */
  | { readonly kind: 'misconfigured'; readonly why: string };

/** The OpenAI-compatible back end from the settings and the API key kept in SecretStorage. */
export function openAITier2Source(settings: HostSettings, apiKey: string | undefined): Tier2Source {
  if (!apiKey)
    return {
      kind: 'not_configured',
      why: 'the OpenAI-compatible Tier 2 back end has no API key (run "Bulwark: Set Tier 2 API Key"; for a keyless local server store any placeholder)',
    };
  if (!settings.tier2.model)
    return { kind: 'not_configured', why: 'the OpenAI-compatible Tier 2 back end has no model (set bulwark.tier2.model)' };
  try {
    return {
      kind: 'backend',
      backend: new OpenAIChatBackend({
        baseURL: settings.tier2.baseUrl,
        apiKey,
        model: settings.tier2.model,
        timeoutMs: settings.tier2.timeoutSeconds * 1000,
      }),
    };
  } catch (e) {
    return { kind: 'misconfigured', why: errorMessage(e) };
  }
}

/** A Tier 2 stand-in for a back end that is chosen but cannot be used: the same verdicts the evaluator gives. */
export class UnusableTier2 {
  constructor(
    private readonly rule: string,
    private readonly verdict: 'block' | 'escalate',
    private readonly reason: string,
  ) {}
  async evaluate(_action: ActionView): Promise<TierVerdict> {
    return { decision: this.verdict, tier: 2, confidence: 1, rules: [this.rule], reason: this.reason };
  }
}
