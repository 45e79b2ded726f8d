// `bulwark hooks install|uninstall|status` and "Bulwark: Install Agent Hooks": puts Bulwark's
// wrapper (<stateDir>/bin/bulwark-hook) into each client's hook configuration, and takes it out again.
//  - Plans first (which files, which entries), writes only what the plan says, atomically.
//  - Client files are edited, never replaced: every other key, entry and comment stays; a file that
//    does not parse is refused and nothing is written.
//  - The manifest <stateDir>/hooks-installed.json records the exact text inserted, so uninstall
//    removes exactly that and a file nobody else touched comes back byte for byte (a file Bulwark
//    created is deleted). If the file was changed since, Bulwark's entries are removed one by one.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from '../fs-util';
import { AGENT_IDS, AGENT_NAMES, type AgentId } from '../../engine/agents/types';
import { builtinTables, compileTables, levelRank, matchKey, normalizePath, type ProtectionLevel } from '../../engine';
import { matchingRules } from '../../engine/protection/tables';
import {
  codexHome,
  copilotHome,
  hookEntries,
  hookFile,
  isCopilotHooksFile,
  type ClientPaths,
  type HookEntry,
  type HookScope,
} from './client-configs';
import {
  addPropertyIfAbsent,
  appendElement,
  ConfigFileError,
  elementsAt,
  isEmptyObject,
  parseConfig,
  removeElements,
  removeIfEmpty,
  removeProperty,
  sameJson,
  undoInsertions,
  type Insertion,
  type JsonPath,
} from './json-edit';
import {
  DEFAULT_CLIENT_TIMEOUT_S,
  MAX_CLIENT_TIMEOUT_S,
  checkClientTimeout,
  renderWrapper,
  wrapperCommand,
  wrapperFileName,
  wrapperTiming,
  type HookPolicy,
  type WrapperPlatform,
} from './wrapper';

export { DEFAULT_CLIENT_TIMEOUT_S };
export type { HookScope };

export const MANIFEST_FILE = 'hooks-installed.json';

/**
 * The client hook timeout that leaves a Tier 3 approval its whole time: the hook program must
 * outlast the approval dialog, and the wrapper and client margins come on top (at least the default).
 */
export function clientTimeoutForApprovals(tier3TimeoutSeconds: number): number {
  const margin = DEFAULT_CLIENT_TIMEOUT_S - wrapperTiming(DEFAULT_CLIENT_TIMEOUT_S).programDeadlineMs / 1000;
  const wanted = Math.ceil(tier3TimeoutSeconds) + margin + 5;
  return Math.min(MAX_CLIENT_TIMEOUT_S, Math.max(DEFAULT_CLIENT_TIMEOUT_S, wanted));
}
/** Client configuration files larger than this are refused (a settings file is a few KB). */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

export interface HooksContext extends ClientPaths {
  /** Absolute Bulwark state directory (manifest, wrapper). */
  readonly stateDir: string;
}

export interface InstallOptions extends HooksContext {
  readonly agents: readonly AgentId[];
  readonly scope: HookScope;
  readonly workspace?: string;
  readonly timeoutSeconds: number;
  /** The Node (or Electron) executable and dist/cli.js the wrapper runs. */
  readonly node: string;
  readonly cli: string;
  /** A built-in policy for the hook program (default: its own default). */
  readonly policy?: HookPolicy;
  /** false: the hook answers allowed shell calls without wrapping them in Bulwark's sandbox (`--no-sandbox`). */
  readonly sandbox?: boolean;
  /** Hosts every sandboxed command may reach besides the ones it names (`--allow-net`). */
  readonly allowNet?: readonly string[];
}

/** One addition Bulwark made to a client file. */
export interface RecordedAddition {
  readonly client: AgentId;
  readonly kind: 'element' | 'property';
  readonly path: JsonPath;
  readonly value: unknown;
}

/** What the manifest remembers about one client file. */
export interface FileRecord {
  readonly file: string;
  readonly scope: HookScope;
  readonly workspace?: string;
  readonly createdFile: boolean;
  /** Directories the install created for the file (outermost first), removed again when empty. */
  readonly createdDirs: readonly string[];
  /** SHA-256 of the file before (null: it did not exist) and right after Bulwark's edit. */
  readonly beforeSha256: string | null;
  readonly afterSha256: string;
  /** The text inserted, in order; undone newest first. */
  readonly insertions: readonly Insertion[];
  readonly additions: readonly RecordedAddition[];
  /** Objects/lists the install created (removed when they end up empty). */
  readonly created: readonly JsonPath[];
  readonly timeoutSeconds: number;
  readonly installedAt: string;
}

export interface Manifest {
  readonly version: 1;
  readonly wrapper?: {
    readonly file: string;
    readonly sha256: string;
    readonly node: string;
    readonly cli: string;
    readonly platform: WrapperPlatform;
  };
  readonly files: readonly FileRecord[];
}

export interface ProtectionOfFile {
  readonly level: ProtectionLevel;
  readonly rule?: string;
}

export interface FilePlan {
  readonly file: string;
  readonly action: 'create' | 'modify' | 'unchanged' | 'delete';
  readonly clients: readonly AgentId[];
  readonly scope: HookScope;
  /** Human-readable changes, one per line. */
  readonly changes: readonly string[];
  readonly beforeSha256: string | null;
  /** The new text (null: delete the file). */
  readonly afterText: string | null;
  readonly record?: FileRecord;
  readonly missingDirs: readonly string[];
  readonly protection: ProtectionOfFile;
}

export interface HooksPlan {
  readonly kind: 'install' | 'uninstall';
  readonly stateDir: string;
  readonly manifestFile: string;
  readonly wrapper?: {
    readonly file: string;
    readonly action: 'create' | 'update' | 'unchanged' | 'delete';
    readonly text?: string;
    readonly sha256?: string;
  };
  readonly files: readonly FilePlan[];
  readonly manifest: Manifest;
  readonly warnings: readonly string[];
  readonly notes: readonly string[];
}

const sha256 = (s: string | Buffer) => crypto.createHash('sha256').update(s).digest('hex');

// ---- reading files -----------------------------------------------------------------------------

/** The file's text (null when it does not exist); refuses a directory, a huge file or invalid UTF-8. */
function readText(file: string): string | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigFileError(`${file}: cannot be read (${(e as Error).message}); nothing was written`);
  }
  if (!st.isFile()) throw new ConfigFileError(`${file} is not a regular file; nothing was written`);
  if (st.size > MAX_CONFIG_BYTES)
    throw new ConfigFileError(
      `${file} is ${st.size} bytes, more than a configuration file should be (${MAX_CONFIG_BYTES}); nothing was written`,
    );
  const bytes = fs.readFileSync(file);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes); // keep a BOM: the file must come back byte for byte
  } catch {
    throw new ConfigFileError(`${file} is not valid UTF-8; nothing was written`);
  }
}

/** The file to write: a symlinked configuration (dotfile managers) is edited at its target. */
function writeTarget(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

// ---- manifest ----------------------------------------------------------------------------------

export function manifestPath(stateDir: string): string {
  return path.join(stateDir, MANIFEST_FILE);
}

export function readManifest(stateDir: string): Manifest {
  const file = manifestPath(stateDir);
  const text = readText(file);
  if (text === null) return { version: 1, files: [] };
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not valid JSON (${(e as Error).message}); move it away to start over (the hooks it lists stay installed)`);
  }
  const o = m as Manifest;
  if (typeof o !== 'object' || o === null || o.version !== 1 || !Array.isArray(o.files))
    throw new Error(`${file} is not a Bulwark hook manifest (version 1)`);
  for (const r of o.files) {
    if (typeof r?.file !== 'string' || !path.isAbsolute(r.file) || !Array.isArray(r.insertions) || !Array.isArray(r.additions))
      throw new Error(`${file}: a file record is malformed`);
  }
  return o;
}

// ---- protection self-check -----------------------------------------------------------------------

/** The protection Bulwark's own tables give a path (what an agent's write there would meet). */
export function protectionOf(file: string, ctx: HooksContext, workspace?: string): ProtectionOfFile {
  const compiled = compileTables(builtinTables(), { platform: ctx.platform, home: ctx.home, workspaceRoots: workspace ? [workspace] : [] });
  let best: ProtectionOfFile = { level: 'unprotected' };
  for (const c of matchingRules(compiled, matchKey(normalizePath(file, ctx.platform), ctx.platform))) {
    const level = c.rule.level as ProtectionLevel;
    if (levelRank(level) > levelRank(best.level)) best = { level, rule: c.rule.id };
  }
  return best;
}

// ---- detection -------------------------------------------------------------------------------------

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function onPath(name: string, ctx: ClientPaths): boolean {
  const exts = ctx.platform === 'win32' ? ['.exe', '.cmd', '.ps1', ''] : [''];
  for (const dir of (ctx.env.PATH ?? '').split(ctx.platform === 'win32' ? ';' : ':')) {
    if (!dir || !path.isAbsolute(dir)) continue;
    for (const ext of exts) {
      try {
        if (fs.statSync(path.join(dir, name + ext)).isFile()) return true;
      } catch {
        /* next */
      }
    }
  }
  return false;
}

/** The clients that look installed for this user: their configuration directory exists or their program is on PATH. */
export function detectClients(ctx: ClientPaths): AgentId[] {
  const h = ctx.home;
  const seen: Record<AgentId, boolean> = {
    claude: isDir(path.join(h, '.claude')) || onPath('claude', ctx),
    codex: isDir(codexHome(ctx)) || onPath('codex', ctx),
    gemini: isDir(path.join(h, '.gemini')) || onPath('gemini', ctx),
    'copilot-cli':
      fs.existsSync(path.join(copilotHome(ctx), 'settings.json')) ||
      fs.existsSync(path.join(copilotHome(ctx), 'config.json')) ||
      onPath('copilot', ctx),
    vscode:
      [
        '.vscode',
        '.vscode-server',
        path.join('.config', 'Code'),
        path.join('.config', 'Code - Insiders'),
        path.join('.local', 'share', 'code-server'),
        path.join('Library', 'Application Support', 'Code'),
        path.join('AppData', 'Roaming', 'Code'),
      ].some((d) => isDir(path.join(h, d))) || onPath('code', ctx),
  };
  return AGENT_IDS.filter((a) => seen[a]);
}

// ---- install -----------------------------------------------------------------------------------------

interface Desired {
  readonly client: AgentId;
  readonly entries: readonly HookEntry[];
}

/** Undoes Bulwark's record on a file's current text: exactly when untouched since, else entry by entry. */
function revertRecord(
  text: string | null,
  rec: FileRecord,
  wrapperFile: string | undefined,
): { text: string | null; exact: boolean; missing: number } {
  if (text !== null && sha256(text) === rec.afterSha256) {
    const back = undoInsertions(text, rec.insertions);
    return { text: rec.createdFile && back === '' ? null : back, exact: true, missing: 0 };
  }
  if (text === null) return { text: null, exact: false, missing: rec.additions.length };
  let t = text;
  let missing = 0;
  for (const a of rec.additions.filter((x) => x.kind === 'element')) {
    const r = removeElements(t, a.path, (v) => sameJson(v, a.value), rec.file);
    if (r.removed === 0) missing++;
    t = r.text;
  }
  if (wrapperFile)
    t = removeStaleEntries(
      t,
      rec.file,
      wrapperFile,
      rec.additions.map((a) => a.path),
    ).text;
  for (const c of [...rec.created].sort((a, b) => b.length - a.length)) t = removeIfEmpty(t, c, rec.file);
  // A property Bulwark added (Copilot's version: 1) goes when nothing but Bulwark's own properties is left.
  const own = rec.additions.filter((a) => a.kind === 'property');
  if (own.length) {
    const root = parseConfig(t, rec.file);
    const keys = (root?.children ?? []).map((p) => p.children?.[0]?.value as string);
    if (keys.every((k) => own.some((a) => a.path[0] === k))) for (const a of own) t = removeProperty(t, a.path, rec.file);
  }
  if (rec.createdFile && isEmptyObject(t, rec.file)) return { text: null, exact: false, missing };
  return { text: t, exact: false, missing };
}

/** Removes entries that run this wrapper but are not the ones wanted (an older install, another timeout). */
function removeStaleEntries(
  text: string,
  file: string,
  wrapperFile: string,
  paths: readonly JsonPath[],
  keep: readonly HookEntry[] = [],
): { text: string; removed: number } {
  let t = text;
  let removed = 0;
  const seen = new Set<string>();
  for (const p of paths) {
    const key = p.join('\0');
    if (seen.has(key)) continue;
    seen.add(key);
    const r = removeElements(
      t,
      p,
      (v) =>
        JSON.stringify(v).includes(JSON.stringify(wrapperFile).slice(1, -1)) &&
        !keep.some((k) => k.path.join('\0') === key && sameJson(k.value, v)),
      file,
    );
    t = r.text;
    removed += r.removed;
  }
  return { text: t, removed };
}

/** The plan of an install: nothing is written until applyPlan(). Throws (nothing written) on a file it cannot edit. */
export function planInstall(o: InstallOptions): HooksPlan {
  checkClientTimeout(o.timeoutSeconds);
  if (!o.agents.length)
    throw new Error('no agent client to install for: name one with --agent (claude, codex, gemini, copilot-cli, vscode)');
  for (const p of [o.home, o.stateDir, o.node, o.cli, ...(o.workspace ? [o.workspace] : [])]) {
    if (!path.isAbsolute(p)) throw new Error(`paths must be absolute, got \`${p}\``);
  }
  if (o.scope === 'workspace' && !o.workspace) throw new Error('--scope workspace needs --workspace DIR');
  const manifest = readManifest(o.stateDir);
  const wrapperFile = path.join(o.stateDir, 'bin', wrapperFileName(o.platform));
  const wrapperText = renderWrapper({ node: o.node, cli: o.cli, stateDir: o.stateDir }, o.platform);
  const wrapperSha = sha256(wrapperText);
  const currentWrapper = readText(wrapperFile);
  const warnings: string[] = [];
  const notes: string[] = [];
  if (!fs.existsSync(o.node)) warnings.push(`Node was not found at ${o.node}: every hook call would be denied until it exists.`);
  if (!fs.existsSync(o.cli))
    warnings.push(`${o.cli} does not exist: every hook call would be denied until it does (build with \`node esbuild.mjs\`).`);

  // Group the wanted entries by file: both Copilots share .github/hooks/bulwark.json.
  const byFile = new Map<string, Desired[]>();
  for (const client of o.agents) {
    const file = hookFile(client, o.scope, o, o.workspace);
    const command = wrapperCommand(client, o.timeoutSeconds, wrapperFile, o.platform, {
      ...(o.policy ? { policy: o.policy } : {}),
      ...(o.sandbox === false ? { sandbox: false } : {}),
      ...(o.allowNet?.length ? { allowNet: o.allowNet } : {}),
    });
    byFile.set(file, [...(byFile.get(file) ?? []), { client, entries: hookEntries(client, command, o.timeoutSeconds, o.platform) }]);
  }

  const files: FilePlan[] = [];
  const records = new Map(manifest.files.map((r) => [r.file, r]));
  for (const [shownFile, desired] of byFile)
    files.push(planHookFile(o, shownFile, desired, records.get(writeTarget(shownFile)), wrapperFile, warnings));
  warnings.push(...stateDirWarnings(o));
  notes.push(...installNotes(o, manifest));

  const keptRecords = manifest.files.filter((r) => !files.some((f) => f.file === r.file));
  const newManifest: Manifest = {
    version: 1,
    wrapper: { file: wrapperFile, sha256: wrapperSha, node: o.node, cli: o.cli, platform: o.platform },
    files: [...keptRecords, ...files.map((f) => f.record!)],
  };
  return {
    kind: 'install',
    stateDir: o.stateDir,
    manifestFile: manifestPath(o.stateDir),
    wrapper: {
      file: wrapperFile,
      action: currentWrapper === null ? 'create' : currentWrapper === wrapperText ? 'unchanged' : 'update',
      text: wrapperText,
      sha256: wrapperSha,
    },
    files,
    manifest: newManifest,
    warnings,
    notes,
  };
}

/**
 * One hook file of an install: its entries as wanted (this install's clients, and those of other clients already
 * recorded there), the previous install's entries replaced exactly or one by one, older entries for this wrapper
 * removed, an identical entry adopted; or `unchanged` when it is already exactly so. Throws on a file it cannot parse.
 */
function planHookFile(
  o: InstallOptions,
  shownFile: string,
  desired: readonly Desired[],
  rec: FileRecord | undefined,
  wrapperFile: string,
  warnings: string[],
): FilePlan {
  const file = writeTarget(shownFile);
  const original = readText(file);
  if (original !== null) parseConfig(original, file); // refuse an unparsable file before anything else
  // Entries of other clients already recorded in this file stay.
  const kept: Desired[] = rec
    ? [...new Set(rec.additions.map((a) => a.client))]
        .filter((c) => !desired.some((d) => d.client === c))
        .map((c) => ({
          client: c,
          entries: rec.additions
            .filter((a) => a.client === c && a.kind === 'element')
            .map((a) => ({ client: c, path: a.path, value: a.value })),
        }))
    : [];
  const wanted = [...kept, ...desired];
  const wantedEntries = wanted.flatMap((d) => d.entries);
  const clients = wanted.map((d) => d.client);
  const protection = protectionOf(file, o, o.workspace);

  // Already exactly so (same entries, all present, nothing else of ours in the way): leave the file alone.
  if (
    rec &&
    original !== null &&
    sameEntrySet(
      rec.additions.filter((a) => a.kind === 'element'),
      wantedEntries,
    ) &&
    wantedEntries.every((e) => elementsAt(original, e.path, file).filter((v) => sameJson(v, e.value)).length === 1)
  ) {
    return {
      file,
      action: 'unchanged',
      clients,
      scope: o.scope,
      changes: ['already installed'],
      beforeSha256: sha256(original),
      afterText: original,
      record: rec,
      missingDirs: [],
      protection,
    };
  }

  const changes: string[] = [];
  let base: string | null = original;
  if (rec) {
    const back = revertRecord(original, rec, wrapperFile);
    base = back.text;
    changes.push(
      back.exact
        ? 'replace the entries of the previous install'
        : `replace the entries of the previous install (the file changed since: removed one by one${back.missing ? `, ${back.missing} already gone` : ''})`,
    );
  }
  const stale = removeStaleEntries(
    base ?? '',
    file,
    wrapperFile,
    wantedEntries.map((e) => e.path),
    wantedEntries,
  );
  if (stale.removed) {
    base = stale.text;
    changes.push(`remove ${stale.removed} older Bulwark entr${stale.removed === 1 ? 'y' : 'ies'} for this wrapper`);
  }

  let text = base ?? '';
  const insertions: Insertion[] = [];
  const created: JsonPath[] = [];
  const additions: RecordedAddition[] = [];
  if (isCopilotHooksFile(file)) {
    const r = addPropertyIfAbsent(text, 'version', 1, file);
    if (r) {
      text = r.text;
      insertions.push(...r.insertions);
      additions.push({ client: desired[0]!.client, kind: 'property', path: ['version'], value: 1 });
      changes.push('+ version: 1');
    }
  }
  for (const e of wantedEntries) {
    if (elementsAt(text, e.path, file).some((v) => sameJson(v, e.value))) {
      // Identical entry already there (a lost manifest): adopt it, do not add a second one.
      additions.push({ client: e.client, kind: 'element', path: e.path, value: e.value });
      changes.push(`= ${e.path.join('.')}[] ${JSON.stringify(e.value)} (already there, adopted)`);
      continue;
    }
    const r = appendElement(text, e.path, e.value, file);
    text = r.text;
    insertions.push(...r.insertions);
    created.push(...r.created);
    additions.push({ client: e.client, kind: 'element', path: e.path, value: e.value });
    changes.push(`+ ${e.path.join('.')}[] ${JSON.stringify(e.value)}`);
  }
  parseConfig(text, file); // what is written must parse
  const missingDirs = original === null ? missingDirsFor(file) : [];
  const record: FileRecord = {
    file,
    scope: o.scope,
    ...(o.scope === 'workspace' ? { workspace: o.workspace } : {}),
    createdFile: base === null,
    createdDirs: rec?.createdDirs.length ? rec.createdDirs : missingDirs,
    beforeSha256: base === null ? null : sha256(base),
    afterSha256: sha256(text),
    insertions,
    additions,
    created,
    timeoutSeconds: o.timeoutSeconds,
    installedAt: new Date().toISOString(),
  };
  const plan: FilePlan = {
    file,
    action: original === null ? 'create' : 'modify',
    clients,
    scope: o.scope,
    changes,
    beforeSha256: original === null ? null : sha256(original),
    afterText: text,
    record,
    missingDirs,
    protection,
  };
  if (levelRank(protection.level) < levelRank('approval_required')) {
    warnings.push(
      `${file} is not protected by Bulwark's tables (an agent could edit it without asking you): keep it under a standard location (${AGENT_NAMES[desired[0]!.client]}'s default) or tell the extension about it.`,
    );
  }
  return plan;
}

/** The state directory outside ~/.bulwark: only an extension started with the same BULWARK_STATE_DIR protects it. */
function stateDirWarnings(o: InstallOptions): string[] {
  const warnings: string[] = [];
  const stateProtection = protectionOf(path.join(o.stateDir, 'bridge.json'), o);
  if (stateProtection.level !== 'full_block') {
    warnings.push(
      `the state directory ${o.stateDir} is not ~/.bulwark, so only an extension started with the same BULWARK_STATE_DIR blocks agents from it; the CLI's own tables do not cover it.`,
    );
  }
  return warnings;
}

/** What each client needs beyond the files (trust prompts, settings) and where two clients' entries both decide. */
function installNotes(o: InstallOptions, manifest: Manifest): string[] {
  const notes: string[] = [];
  if (o.agents.includes('codex')) {
    notes.push(
      `Codex runs a new or changed hook only after you trust it: start \`codex\` once in a terminal and accept Bulwark's hooks in the review screen (or type /hooks and trust them). Headless \`codex exec\` cannot ask: until then it runs without Bulwark unless started with --dangerously-bypass-hook-trust. Re-installing with the same --timeout keeps the command the same, so the trust stays.`,
    );
    if (o.scope === 'workspace')
      notes.push("Codex reads a project's .codex/hooks.json only in a project you trust (trust the folder when Codex asks).");
  }
  if (o.agents.includes('copilot-cli') && o.scope === 'workspace')
    notes.push(
      'Copilot CLI loads .github/hooks in prompt mode (-p) only for a trusted folder, with COPILOT_ALLOW_ALL, or GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true.',
    );
  if (o.agents.includes('vscode'))
    notes.push(
      "VS Code runs agent hooks only with `chat.hooks.enabled` on (Preview); it also reads .claude/settings.json and .github/hooks/*.json, so a tool call there may be decided by more than one of Bulwark's entries (the strictest answer wins).",
    );
  if (
    o.agents.includes('vscode') &&
    !o.agents.includes('copilot-cli') &&
    !manifest.files.some((r) => r.additions.some((a) => a.client === 'copilot-cli'))
  ) {
    notes.push(
      "Copilot CLI reads the same hook files (~/.copilot/hooks, .github/hooks): until Bulwark's Copilot CLI hooks are installed too (--agent copilot-cli), it runs the VS Code entry, which does not know its tool names and so denies them.",
    );
  }
  if (o.scope === 'workspace' && o.agents.includes('claude') && o.agents.includes('copilot-cli')) {
    notes.push(
      "Copilot CLI also runs a workspace's .claude/settings.json hooks, so its tool calls there are decided by both entries (the strictest answer wins; a question for you can come twice).",
    );
  }
  if (o.agents.includes('claude') && o.agents.includes('vscode'))
    notes.push("VS Code also runs Claude Code's hooks (it ignores their matcher): both entries decide, the strictest wins.");
  return notes;
}

/** The same entries (client, list, value), in any order. */
function sameEntrySet(
  a: readonly { client: AgentId; path: JsonPath; value: unknown }[],
  b: readonly { client: AgentId; path: JsonPath; value: unknown }[],
): boolean {
  const key = (e: { client: AgentId; path: JsonPath; value: unknown }) => JSON.stringify([e.client, e.path, e.value]);
  return sameJson(a.map(key).sort(), b.map(key).sort());
}

/** Directories that do not exist on the way to `file` (outermost first). */
function missingDirsFor(file: string): string[] {
  const out: string[] = [];
  let d = path.dirname(file);
  while (!fs.existsSync(d)) {
    out.unshift(d);
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  return out;
}

// ---- uninstall -----------------------------------------------------------------------------------------

export interface UninstallOptions extends HooksContext {
  /** Only these clients' entries (default: every client in the manifest). */
  readonly agents?: readonly AgentId[];
}

/** The plan of an uninstall: removes exactly what the manifest says Bulwark added, and the wrapper when nothing is left. */
export function planUninstall(o: UninstallOptions): HooksPlan {
  const manifest = readManifest(o.stateDir);
  const remove = new Set<AgentId>(o.agents?.length ? o.agents : AGENT_IDS);
  const files: FilePlan[] = [];
  const keptRecords: FileRecord[] = [];
  const warnings: string[] = [];
  const wrapperFile = manifest.wrapper?.file;
  for (const rec of manifest.files) {
    const ours = rec.additions.filter((a) => remove.has(a.client));
    if (!ours.length) {
      keptRecords.push(rec);
      continue;
    }
    const clients = [...new Set(ours.map((a) => a.client))];
    const current = readText(rec.file);
    const protection = protectionOf(rec.file, o, rec.workspace);
    if (current === null) {
      files.push({
        file: rec.file,
        action: 'unchanged',
        clients,
        scope: rec.scope,
        changes: ['already gone'],
        beforeSha256: null,
        afterText: null,
        missingDirs: [],
        protection,
        record: rec,
      });
      continue;
    }
    parseConfig(current, rec.file);
    const back = revertRecord(current, rec, wrapperFile);
    const changes = [
      back.exact
        ? 'remove exactly what Bulwark inserted (the file has not changed since)'
        : `remove Bulwark's entries one by one (the file changed since the install${back.missing ? `; ${back.missing} of them were already gone` : ''})`,
    ];
    const stay = rec.additions.filter((a) => !remove.has(a.client) && a.kind === 'element');
    let text = back.text;
    let record: FileRecord | undefined;
    if (stay.length) {
      // Another client's entries in the same file stay: put them back on the reverted text.
      let t = text ?? '';
      const insertions: Insertion[] = [];
      const created: JsonPath[] = [];
      const additions: RecordedAddition[] = [];
      if (isCopilotHooksFile(rec.file)) {
        const r = addPropertyIfAbsent(t, 'version', 1, rec.file);
        if (r) {
          t = r.text;
          insertions.push(...r.insertions);
          additions.push({ client: stay[0]!.client, kind: 'property', path: ['version'], value: 1 });
        }
      }
      for (const a of stay) {
        const r = appendElement(t, a.path, a.value, rec.file);
        t = r.text;
        insertions.push(...r.insertions);
        created.push(...r.created);
        additions.push(a);
      }
      record = {
        ...rec,
        beforeSha256: text === null ? null : sha256(text),
        afterSha256: sha256(t),
        insertions,
        additions,
        created,
        createdFile: rec.createdFile && (text === null || text.trim() === ''),
      };
      text = t;
      keptRecords.push(record);
    }
    for (const a of ours.filter((x) => x.kind === 'element')) changes.push(`- ${a.path.join('.')}[] ${JSON.stringify(a.value)}`);
    if (text === null) changes.push('delete the file (Bulwark created it and nothing else is in it)');
    files.push({
      file: rec.file,
      action: text === null ? 'delete' : text === current ? 'unchanged' : 'modify',
      clients,
      scope: rec.scope,
      changes,
      beforeSha256: current === null ? null : sha256(current),
      afterText: text,
      missingDirs: [],
      protection,
      record: rec,
    });
  }
  const lastOne = keptRecords.length === 0;
  const newManifest: Manifest = lastOne ? { version: 1, files: [] } : { ...manifest, files: keptRecords };
  return {
    kind: 'uninstall',
    stateDir: o.stateDir,
    manifestFile: manifestPath(o.stateDir),
    ...(wrapperFile && lastOne
      ? { wrapper: { file: wrapperFile, action: fs.existsSync(wrapperFile) ? ('delete' as const) : ('unchanged' as const) } }
      : {}),
    files,
    manifest: newManifest,
    warnings,
    notes: [],
  };
}

// ---- writing -------------------------------------------------------------------------------------------

/** Writes `text` to `file` atomically; an existing file keeps its mode. */
function atomicWrite(file: string, text: string, mode: number): void {
  writeFileAtomicSync(file, text, { mode, keepMode: true });
}

function ensureDirs(dirs: readonly string[], mode?: number): void {
  for (const d of dirs) {
    try {
      fs.mkdirSync(d, mode);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

export interface ApplyResult {
  readonly written: readonly string[];
  readonly deleted: readonly string[];
}

/**
 * Carries out a plan: the wrapper first (so no configuration ever names a missing wrapper), then
 * each file (refused if it changed since the plan was made), then the manifest. On an error it
 * stops; the manifest then still lists what was written before the error.
 */
export function applyPlan(plan: HooksPlan): ApplyResult {
  const written: string[] = [];
  const deleted: string[] = [];
  ensureDirs(missingDirsFor(path.join(plan.stateDir, 'x')).concat(plan.stateDir), 0o700);
  const done: FileRecord[] = [];
  const writeManifest = (files: readonly FileRecord[]) => {
    const m: Manifest = { ...plan.manifest, files };
    atomicWrite(plan.manifestFile, JSON.stringify(m, null, 2) + '\n', 0o600);
  };
  if (plan.kind === 'install' && plan.wrapper?.text !== undefined && plan.wrapper.action !== 'unchanged') {
    ensureDirs([path.join(plan.stateDir, 'bin')], 0o700);
    atomicWrite(plan.wrapper.file, plan.wrapper.text, 0o755);
    fs.chmodSync(plan.wrapper.file, 0o755);
    written.push(plan.wrapper.file);
  }
  const untouched = plan.manifest.files.filter((r) => !plan.files.some((f) => f.file === r.file));
  for (const f of plan.files) {
    if (f.action === 'unchanged') {
      if (f.record && plan.manifest.files.includes(f.record)) done.push(f.record);
      continue;
    }
    const now = readText(f.file);
    if ((now === null ? null : sha256(now)) !== f.beforeSha256)
      throw new Error(`${f.file} changed while Bulwark was about to write it; nothing more was written: run the command again`);
    if (f.afterText === null) {
      fs.rmSync(f.file, { force: true });
      deleted.push(f.file);
      for (const d of [...(f.record?.createdDirs ?? [])].reverse()) {
        try {
          fs.rmdirSync(d);
          deleted.push(d);
        } catch {
          break;
        } // not empty (or gone): it stays
      }
    } else {
      ensureDirs(f.missingDirs);
      atomicWrite(f.file, f.afterText, 0o644);
      written.push(f.file);
    }
    const kept = plan.manifest.files.find((r) => r.file === f.file);
    if (kept) done.push(kept);
    if (plan.kind === 'install') writeManifest([...untouched, ...done]);
  }
  if (plan.kind === 'uninstall') {
    if (plan.wrapper?.action === 'delete') {
      fs.rmSync(plan.wrapper.file, { force: true });
      deleted.push(plan.wrapper.file);
      try {
        fs.rmdirSync(path.dirname(plan.wrapper.file));
      } catch {
        /* other files in bin/ */
      }
    }
    if (plan.manifest.files.length === 0 && !plan.manifest.wrapper) {
      fs.rmSync(plan.manifestFile, { force: true });
      try {
        fs.rmdirSync(plan.stateDir);
      } catch {
        /* the extension's files (bridge, audit log) keep it */
      }
    } else {
      writeManifest(plan.manifest.files);
    }
  } else {
    writeManifest(plan.manifest.files);
  }
  return { written, deleted };
}

// ---- keeping the wrapper pointed at a live program ------------------------------------------------------

/**
 * Rewrites the wrapper when the Node or dist/cli.js it runs is gone (an extension update moves
 * dist/cli.js; a deleted checkout) and `node`/`cli` exist: the clients' configurations name only
 * the wrapper, so they stay as they are. Until then every hook call is denied (fail closed), so
 * this only restores what the user installed. Returns what it did, for the log.
 */
export function repairWrapper(o: {
  readonly stateDir: string;
  readonly platform: WrapperPlatform;
  readonly node: string;
  readonly cli: string;
}): string | undefined {
  const manifest = readManifest(o.stateDir);
  const w = manifest.wrapper;
  if (!w || !manifest.files.length || w.platform !== o.platform) return undefined;
  const gone = [w.node, w.cli].filter((p) => !fs.existsSync(p));
  if (!gone.length || !fs.existsSync(o.node) || !fs.existsSync(o.cli)) return undefined;
  const text = renderWrapper({ node: o.node, cli: o.cli, stateDir: o.stateDir }, o.platform);
  atomicWrite(w.file, text, 0o755);
  fs.chmodSync(w.file, 0o755);
  const m: Manifest = { ...manifest, wrapper: { ...w, node: o.node, cli: o.cli, sha256: sha256(text) } };
  atomicWrite(manifestPath(o.stateDir), JSON.stringify(m, null, 2) + '\n', 0o600);
  return `the hook wrapper ${w.file} ran ${gone.join(' and ')}, which ${gone.length === 1 ? 'is' : 'are'} gone; it now runs ${o.cli}`;
}

// ---- describing a plan ----------------------------------------------------------------------------------

const LEVEL_WORDS: Record<ProtectionLevel, string> = {
  unprotected: 'NOT protected from agents',
  write_tier1_min: "agents' writes checked at Tier 1",
  escalate_tier2: "agents' writes need a Tier 2 review",
  approval_required: "agents' writes need your approval",
  read_only: 'read-only to agents',
  full_block: 'agents can neither read nor write it',
};

/** The plan as lines of text: every file, what happens to it, and each entry added or removed. */
export function describePlan(plan: HooksPlan): string[] {
  const lines: string[] = [];
  if (plan.wrapper && plan.wrapper.action !== 'unchanged')
    lines.push(`${plan.wrapper.action} ${plan.wrapper.file}${plan.kind === 'install' ? ' (the hook wrapper, mode 0755)' : ''}`);
  for (const f of plan.files) {
    lines.push(
      `${f.action} ${f.file}  [${f.clients.map((c) => AGENT_NAMES[c]).join(', ')}; ${f.scope}; ${LEVEL_WORDS[f.protection.level]}${f.protection.rule ? ` (${f.protection.rule})` : ''}]`,
    );
    for (const c of f.changes) lines.push(`    ${c}`);
  }
  if (plan.files.some((f) => f.action !== 'unchanged') || (plan.wrapper && plan.wrapper.action !== 'unchanged'))
    lines.push(`${plan.kind === 'install' ? 'record in' : 'update'} ${plan.manifestFile}`);
  return lines;
}

export function planChangesAnything(plan: HooksPlan): boolean {
  return plan.files.some((f) => f.action !== 'unchanged') || (plan.wrapper !== undefined && plan.wrapper.action !== 'unchanged');
}

// ---- status -------------------------------------------------------------------------------------------------

export type ClientState = 'guarded' | 'not installed' | 'tampered' | 'broken';

export interface ClientStatus {
  readonly client: AgentId;
  readonly state: ClientState;
  readonly locations: readonly {
    readonly scope: HookScope;
    readonly file: string;
    readonly workspace?: string;
    readonly problems: readonly string[];
  }[];
  readonly problems: readonly string[];
  readonly notes: readonly string[];
}

export interface HooksStatus {
  readonly clients: readonly ClientStatus[];
  readonly wrapper?: { readonly file: string; readonly problems: readonly string[] };
}

/** Per client: guarded (where), not installed, tampered (an entry changed or gone, the wrapper missing or modified), or broken (Node or the CLI gone). */
export function hooksStatus(ctx: HooksContext & { readonly workspace?: string }): HooksStatus {
  const manifest = readManifest(ctx.stateDir);
  const wrapperProblems: string[] = [];
  const broken: string[] = [];
  if (manifest.wrapper) {
    const w = manifest.wrapper;
    let text: string | null = null;
    try {
      text = readText(w.file);
    } catch (e) {
      wrapperProblems.push((e as Error).message);
    }
    if (text === null) wrapperProblems.push(`the wrapper ${w.file} is missing`);
    else if (sha256(text) !== w.sha256) wrapperProblems.push(`the wrapper ${w.file} was modified since the install`);
    else if (ctx.platform !== 'win32' && (fs.statSync(w.file).mode & 0o111) === 0)
      wrapperProblems.push(`the wrapper ${w.file} is not executable`);
    if (!fs.existsSync(w.node)) broken.push(`Node is gone from ${w.node}: every tool call is denied; install the hooks again`);
    if (!fs.existsSync(w.cli)) broken.push(`${w.cli} is gone: every tool call is denied; install the hooks again`);
  }
  const records = manifest.files.filter((r) => r.scope === 'user' || !ctx.workspace || r.workspace === ctx.workspace);
  const clients: ClientStatus[] = AGENT_IDS.map((client) => {
    const locations = records
      .filter((r) => r.additions.some((a) => a.client === client))
      .map((r) => {
        const problems: string[] = [];
        let text: string | null = null;
        try {
          text = readText(r.file);
          if (text !== null) parseConfig(text, r.file);
        } catch (e) {
          problems.push((e as Error).message);
          text = null;
        }
        if (text === null && !problems.length) problems.push(`${r.file} is gone`);
        if (text !== null) {
          for (const a of r.additions.filter((x) => x.client === client && x.kind === 'element')) {
            if (!elementsAt(text, a.path, r.file).some((v) => sameJson(v, a.value)))
              problems.push(`the ${a.path.join('.')} entry in ${r.file} was changed or removed`);
          }
        }
        return { scope: r.scope, file: r.file, ...(r.workspace ? { workspace: r.workspace } : {}), problems };
      });
    const notes: string[] = [];
    if (client === 'codex' && locations.length)
      notes.push(
        codexTrustNote(
          ctx,
          locations.map((l) => l.file),
        ),
      );
    const problems = locations.length ? [...wrapperProblems, ...locations.flatMap((l) => l.problems)] : [];
    const state: ClientState = !locations.length ? 'not installed' : problems.length ? 'tampered' : broken.length ? 'broken' : 'guarded';
    return { client, state, locations, problems: state === 'broken' ? broken : problems, notes };
  });
  return { clients, ...(manifest.wrapper ? { wrapper: { file: manifest.wrapper.file, problems: wrapperProblems } } : {}) };
}

/** Whether Codex has a trust record for Bulwark's hooks (it keys trust by hooks.json path and event). */
function codexTrustNote(ctx: HooksContext, files: readonly string[]): string {
  let config = '';
  try {
    config = fs.readFileSync(path.join(codexHome(ctx), 'config.toml'), 'utf8').slice(0, MAX_CONFIG_BYTES);
  } catch {
    /* none */
  }
  const trusted = files.every((f) => config.includes(`${f}:pre_tool_use:`));
  return trusted
    ? 'Codex has a trust record for these hooks (if it asks again, the hook changed: review it in /hooks).'
    : "Codex shows no trust record for these hooks yet: start `codex`, accept Bulwark's hooks in the review screen (or /hooks); until then Codex runs without them (headless: --dangerously-bypass-hook-trust).";
}

/** One line per client, for `bulwark hooks status` and the editor's status dialog. */
export function describeStatus(s: HooksStatus): string[] {
  const lines: string[] = [];
  for (const c of s.clients) {
    const where = c.locations.map((l) => `${l.scope}${l.workspace ? ` ${l.workspace}` : ''}: ${l.file}`).join('; ');
    const head =
      c.state === 'guarded' ? `guarded (${where})` : c.state === 'not installed' ? 'not installed' : `${c.state.toUpperCase()} (${where})`;
    lines.push(`${AGENT_NAMES[c.client]}: ${head}`);
    for (const p of c.problems) lines.push(`    ${p}`);
    for (const n of c.notes) lines.push(`    ${n}`);
  }
  return lines;
}
