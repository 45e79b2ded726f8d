// Owns the engine for the extension host: reads Bulwark's settings, the Tier 2 API key and the
// workspace folders, hands them to the Node layer (src/node/host-shield.ts) and rebuilds the
// engine when any of them changes. No policy logic here.
//
// Change detection does not depend on events alone: every engine() call compares a fingerprint of
// the settings, folders and policy files with the one the current engine was built from, so a check
// never runs on an engine older than the settings it was asked under. The events only make the
// rebuild (and its error notifications) happen eagerly.
import * as vscode from 'vscode';
import os from 'node:os';
import path from 'node:path';
import type { Engine } from '../engine';
import type { InjectionClassifier } from '../engine/shield/pipeline';
import type { StateStore } from '../engine/shield/types';
import { createNodeEngine, currentPlatform } from '../node/create-engine';
import {
  HOST_SETTING_KEYS,
  fileStamp,
  normalizeHostSettings,
  policyFilesOf,
  policyLabel,
  type HostSettingKey,
  type HostSettings,
} from '../node/host-settings';
import { buildHostShield, type HostProblem } from '../node/host-shield';
import { StateStores } from '../node/state-store';
import { openAITier2Source, type Tier2Source } from '../node/tier2-setup';
import { loadOnnxClassifier } from '../node/classifier/onnx-classifier';
import { ModalApprovalSurface } from './approval-modal';
import { PendingBridgeActions } from '../node/hooks/bridge-service';
import { LmChatBackend, parseLmSelector } from './lm-backend';
import { SandboxHelperClient } from '../node/sandbox/helper-client';
import { errorMessage } from '../engine/error-message';

/** SecretStorage key of the OpenAI-compatible evaluator's API key. */
export const TIER2_API_KEY_SECRET = 'bulwark.tier2.apiKey';

export type Tier1Mode = 'heuristics only' | 'classifier' | 'classifier loading' | 'classifier failed';

export interface HostStatus {
  readonly settings: HostSettings;
  readonly policyLabel: string;
  /** Set when the last build found the policy invalid (every non-read action blocks). */
  readonly policyError?: string;
  readonly tier1: Tier1Mode;
  readonly tier1Detail: string;
  readonly tier2: string;
  readonly stateDir?: string;
  /** Problems of the last build, errors first. */
  readonly problems: readonly HostProblem[];
  readonly built: boolean;
}

type ClassifierState =
  | { readonly state: 'loading'; readonly promise: Promise<void> }
  | { readonly state: 'loaded'; readonly classifier: InjectionClassifier & { dispose?(): Promise<void> } }
  | { readonly state: 'failed'; readonly error: string };

interface Snapshot {
  readonly key: string;
  readonly settings: HostSettings;
  readonly settingProblems: readonly string[];
  readonly workspaceRoots: string[];
  readonly selfPaths: string[];
}

interface Built {
  readonly key: string;
  readonly problems: readonly HostProblem[];
  readonly policyError?: string;
  readonly tier2: string;
}

export class EngineHost implements vscode.Disposable {
  private current: { key: string; engine: Promise<Engine> } | undefined;
  private lastBuilt: Built | undefined;
  private secretsGeneration = 0;
  /** The one owner of the Shield's durable state in the extension host (the file tools use it too). */
  private readonly stores = new StateStores();
  private readonly classifiers = new Map<string, ClassifierState>();
  /** Problems already shown to the user (by the previous build): shown again only after they went away. */
  private shownProblems = new Set<string>();
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly subscriptions: vscode.Disposable[] = [this.changed];
  private readonly surface: ModalApprovalSurface;
  /** Actions an agent's hook is waiting on (the approval dialog names the agent and gives up at the hook's deadline). */
  readonly pendingBridgeActions = new PendingBridgeActions();
  /** Fires when the engine was rebuilt or the settings changed (the status bar listens). */
  readonly onDidChange = this.changed.event;

  /** `extraSelfPaths`: more Bulwark state outside the storage folders (a custom audit log location), FullBlock to agents. */
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly extraSelfPaths: () => string[] = () => [],
  ) {
    this.surface = new ModalApprovalSurface(log, this.pendingBridgeActions);
    const refresh = () => this.refresh();
    this.subscriptions.push(
      vscode.workspace.onDidChangeWorkspaceFolders(refresh),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('bulwark')) refresh();
      }),
      context.secrets.onDidChange((e) => {
        if (e.key === TIER2_API_KEY_SECRET) {
          this.secretsGeneration++;
          refresh();
        }
      }),
    );
    const watcher = vscode.workspace.createFileSystemWatcher('**/.bulwark/policy.yaml');
    this.subscriptions.push(watcher, watcher.onDidChange(refresh), watcher.onDidCreate(refresh), watcher.onDidDelete(refresh));
  }

  /** The engine for the current settings and folders; built lazily (off the activation path) and rebuilt when they change. */
  engine(): Promise<Engine> {
    const snap = this.snapshot();
    if (!this.current || this.current.key !== snap.key) {
      const engine = this.build(snap);
      const entry = { key: snap.key, engine };
      this.current = entry;
      // A build that fails is not cached: the next call tries again.
      engine.catch((e: unknown) => {
        this.log.error(`building the engine failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
        if (this.current === entry) this.current = undefined;
      });
    }
    return this.current.engine;
  }

  private helper: SandboxHelperClient | undefined;

  /** The sandbox helper process (dist/sandbox-helper.js): started on first use, killed with the extension. */
  sandboxHelper(): SandboxHelperClient {
    this.helper ??= new SandboxHelperClient({
      helperScript: path.join(this.context.extensionPath, 'dist', 'sandbox-helper.js'),
      log: (line) => this.log.info(line),
    });
    return this.helper;
  }

  /** Forget the current engine (e.g. the API key changed); the next engine() call builds a new one. */
  invalidate(): void {
    this.secretsGeneration++;
    this.refresh();
  }

  private refresh(): void {
    this.changed.fire();
    if (this.current) void this.engine().catch(() => undefined); // rebuild now, so its errors are shown now
  }

  /** Bulwark's state folder (canary, state file): the workspace's storage, else the global one; local files only. */
  stateDir(): string | undefined {
    const uri = this.context.storageUri ?? this.context.globalStorageUri;
    return uri && uri.scheme === 'file' ? uri.fsPath : undefined;
  }

  /**
   * The Shield's durable state store for the current state folder: the one the engine uses. A store
   * that failed to open is a FailingStateStore (every call throws with the reason), opened again next time.
   */
  stateStore(): StateStore {
    return this.stores.storeFor(this.stateDir()).store;
  }

  status(): HostStatus {
    const snap = this.snapshot();
    const s = snap.settings;
    const built = this.lastBuilt?.key === snap.key ? this.lastBuilt : undefined;
    let tier1: Tier1Mode = 'heuristics only';
    let tier1Detail = 'Tier 1 runs the heuristic rules only: no classifier model is configured (bulwark.classifier.modelDir).';
    if (s.classifierModelDir) {
      const c = this.classifiers.get(s.classifierModelDir);
      if (c?.state === 'loaded') {
        tier1 = 'classifier';
        tier1Detail = `Tier 1 runs the heuristic rules and the classifier ${c.classifier.id} (blocks at ≥ ${s.classifierThreshold}).`;
      } else if (c?.state === 'failed') {
        tier1 = 'classifier failed';
        tier1Detail = `Tier 1 blocks: the classifier in ${s.classifierModelDir} failed to load (${c.error}). Fix or clear bulwark.classifier.modelDir.`;
      } else {
        tier1 = 'classifier loading';
        tier1Detail = `The classifier in ${s.classifierModelDir} loads on the first check; until it has loaded, nothing is decided.`;
      }
    }
    return {
      settings: s,
      policyLabel: policyLabel(s.policy),
      policyError: built?.policyError,
      tier1,
      tier1Detail,
      tier2: built?.tier2 ?? 'Tier 2: not set up yet (set up on the first check).',
      stateDir: this.stateDir(),
      problems: built?.problems ?? [],
      built: built !== undefined,
    };
  }

  private snapshot(): Snapshot {
    const config = vscode.workspace.getConfiguration('bulwark');
    // User (global) values only: a workspace must not loosen what the user chose, whatever the scope says.
    const raw: Partial<Record<HostSettingKey, unknown>> = {};
    for (const k of HOST_SETTING_KEYS) {
      const i = config.inspect(k);
      raw[k] = i?.globalValue ?? i?.defaultValue;
    }
    const { settings, problems } = normalizeHostSettings((k) => raw[k]);
    const workspaceRoots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    const stamps = policyFilesOf(settings, workspaceRoots).map((f) => [f, fileStamp(f)]);
    const selfPaths = this.extraSelfPaths();
    const key = JSON.stringify({ raw, workspaceRoots, stamps, secrets: this.secretsGeneration, state: this.stateDir(), selfPaths });
    return { key, settings, settingProblems: problems, workspaceRoots, selfPaths };
  }

  private async build(snap: Snapshot): Promise<Engine> {
    const s = snap.settings;
    const t0 = Date.now();
    this.log.debug('building the engine');
    const stateDir = this.stateDir();
    const selfPaths = [this.context.globalStorageUri, this.context.storageUri, this.context.logUri]
      .flatMap((u) => (u && u.scheme === 'file' ? [u.fsPath] : []))
      .concat(snap.selfPaths);
    const { store, error: storeError } = this.stores.storeFor(stateDir);
    const [tier2, classifier] = await Promise.all([this.tier2Source(s), this.classifierFor(s.classifierModelDir)]);
    const hs = buildHostShield({
      settings: s,
      home: os.homedir(),
      platform: currentPlatform(),
      workspaceRoots: snap.workspaceRoots,
      stateDir,
      store,
      tier2,
      surfaces: [this.surface],
      onTier3Verdict: (v) => {
        if (v.event === 'rate_limited')
          void vscode.window.showWarningMessage(`Bulwark: an approval request was denied without asking you: ${v.reason}.`);
      },
      classifier,
    });
    const problems: HostProblem[] = [
      ...hs.problems,
      ...snap.settingProblems.map((m) => ({ severity: 'warning' as const, message: `${m}.` })),
      ...(storeError ? [{ severity: stateDir ? ('error' as const) : ('warning' as const), message: `${storeError}.` }] : []),
    ];
    const c = s.classifierModelDir ? this.classifiers.get(s.classifierModelDir) : undefined;
    if (c?.state === 'failed')
      problems.push({
        severity: 'error',
        message: `The Tier 1 classifier in ${s.classifierModelDir} failed to load, so every action that reaches Tier 1 is blocked until it loads or the setting is cleared: ${c.error}`,
      });

    const { engine, shellError } = await createNodeEngine({
      workspaceRoots: snap.workspaceRoots,
      selfPaths,
      shield: hs.parts,
      ssrfPolicy: { allowLoopbackPorts: s.allowLoopbackPorts },
      extraReadRoots: s.extraReadRoots,
    });
    if (shellError)
      problems.push({ severity: 'error', message: `The shell grammar failed to load, so every shell command is blocked: ${shellError}` });

    this.lastBuilt = {
      key: snap.key,
      problems,
      policyError: hs.parts.policy.ok ? undefined : hs.parts.policy.error,
      tier2: hs.tier2Status,
    };
    this.report(problems);
    this.log.info(
      `engine ready in ${Date.now() - t0} ms: policy ${policyLabel(s.policy)}, IFC ${s.ifcPolicy}${s.ifcMode ? ` (${s.ifcMode})` : ''}, ${snap.workspaceRoots.length} workspace folder(s), ${classifier ? `classifier ${classifier.id}` : 'heuristics only'}; ${hs.tier2Status}; state in ${stateDir ?? '(memory)'}`,
    );
    this.changed.fire();
    return engine;
  }

  /** Logs every problem; notifies the ones not already shown by the previous build. */
  private report(problems: readonly HostProblem[]): void {
    const now = new Set<string>();
    for (const p of problems) {
      now.add(p.message);
      if (p.severity === 'error') this.log.error(p.message);
      else this.log.warn(p.message);
      if (this.shownProblems.has(p.message)) continue;
      const text = `Bulwark: ${p.message}`;
      if (p.severity === 'error') void vscode.window.showErrorMessage(text);
      else void vscode.window.showWarningMessage(text);
    }
    this.shownProblems = now;
  }

  private async tier2Source(s: HostSettings): Promise<Tier2Source> {
    switch (s.tier2.backend) {
      case 'none':
        return { kind: 'none' };
      case 'openai': {
        let key: string | undefined;
        try {
          key = await this.context.secrets.get(TIER2_API_KEY_SECRET);
        } catch (e) {
          return { kind: 'not_configured', why: `the API key could not be read from VS Code's secret storage (${errorMessage(e)})` };
        }
        return openAITier2Source(s, key);
      }
      case 'vscode-lm': {
        const selector = parseLmSelector(s.tier2.lmModel);
        if (!selector)
          return {
            kind: 'not_configured',
            why: "no VS Code language model is chosen (set bulwark.tier2.lmModel to vendor/family/id, e.g. copilot/gpt-4o-mini; prefer a model other than the agent's)",
          };
        return { kind: 'backend', backend: new LmChatBackend(selector, s.tier2.lmModel) };
      }
    }
  }

  /**
   * The Tier 1 classifier for a model folder: loaded on first use (the first engine build that needs
   * it), kept across rebuilds. A configured model that fails to load is a fault on the decision
   * path: Tier 1 blocks with the load error (fail closed), the status bar and a notification say so,
   * and loading is tried again on the next rebuild. Only an empty model setting means heuristics only.
   */
  private async classifierFor(modelDir: string): Promise<InjectionClassifier | undefined> {
    for (const [dir, c] of this.classifiers) {
      if (dir !== modelDir) {
        this.classifiers.delete(dir);
        if (c.state === 'loaded') void c.classifier.dispose?.().catch(() => undefined);
      }
    }
    if (!modelDir) return undefined;
    let c = this.classifiers.get(modelDir);
    if (!c || c.state === 'failed') {
      const t0 = Date.now();
      this.log.info(`loading the Tier 1 classifier from ${modelDir}`);
      const promise = loadOnnxClassifier(modelDir)
        .then(
          (classifier) => {
            this.classifiers.set(modelDir, { state: 'loaded', classifier });
            this.log.info(`classifier ${classifier.id} loaded in ${Date.now() - t0} ms`);
          },
          (e: unknown) => {
            const error = errorMessage(e);
            this.classifiers.set(modelDir, { state: 'failed', error });
            this.log.error(`the classifier in ${modelDir} failed to load; Tier 1 blocks until it loads: ${error}`);
          },
        )
        .finally(() => this.changed.fire());
      c = { state: 'loading', promise };
      this.classifiers.set(modelDir, c);
      this.changed.fire();
    }
    if (c.state === 'loading') await c.promise;
    const done = this.classifiers.get(modelDir);
    if (done?.state === 'loaded') return done.classifier;
    const why = `the classifier in ${modelDir} failed to load (${done?.state === 'failed' ? done.error : 'unknown error'})`;
    return { id: 'unavailable', injectionScore: () => Promise.reject(new Error(why)) };
  }

  dispose(): void {
    this.helper?.dispose();
    for (const d of this.subscriptions) d.dispose();
    for (const c of this.classifiers.values()) if (c.state === 'loaded') void c.classifier.dispose?.().catch(() => undefined);
    this.classifiers.clear();
  }
}
