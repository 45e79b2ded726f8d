// Where each client reads its hooks, and the entries Bulwark adds there (per client dialect,
// /work/shared/agent-clients/README.md and vscode-integration-facts.md §A3). Data only: the
// installer (install.ts) edits the files.
import path from 'node:path';
import type { AgentId } from '../../engine/agents/types';
import type { JsonPath } from './json-edit';
import type { WrapperPlatform } from './wrapper';

export type HookScope = 'user' | 'workspace';

export interface ClientPaths {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly platform: WrapperPlatform;
}

/** One entry Bulwark adds to a client's configuration: appended to the list at `path`. */
export interface HookEntry {
  readonly client: AgentId;
  readonly path: JsonPath;
  readonly value: unknown;
}

/** `$CODEX_HOME` if set (absolute), else ~/.codex. */
export function codexHome(p: ClientPaths): string {
  const v = p.env.CODEX_HOME;
  return v && path.isAbsolute(v) ? path.resolve(v) : path.join(p.home, '.codex');
}

/** `$COPILOT_HOME` if set (absolute), else ~/.copilot. */
export function copilotHome(p: ClientPaths): string {
  const v = p.env.COPILOT_HOME;
  return v && path.isAbsolute(v) ? path.resolve(v) : path.join(p.home, '.copilot');
}

/** The file a client reads Bulwark's hooks from, for a scope. */
export function hookFile(client: AgentId, scope: HookScope, p: ClientPaths, workspace?: string): string {
  if (scope === 'workspace') {
    if (!workspace) throw new Error('a workspace-scope install needs the workspace folder');
    switch (client) {
      case 'claude':
        return path.join(workspace, '.claude', 'settings.json');
      // Codex loads a project's .codex/hooks.json only in a project the user trusts.
      case 'codex':
        return path.join(workspace, '.codex', 'hooks.json');
      case 'gemini':
        return path.join(workspace, '.gemini', 'settings.json');
      // Both Copilots read .github/hooks/*.json: one file holds both clients' entries.
      case 'copilot-cli':
      case 'vscode':
        return path.join(workspace, '.github', 'hooks', 'bulwark.json');
    }
  }
  switch (client) {
    case 'claude':
      return path.join(p.home, '.claude', 'settings.json');
    case 'codex':
      return path.join(codexHome(p), 'hooks.json');
    case 'gemini':
      return path.join(p.home, '.gemini', 'settings.json');
    // Not inline in $COPILOT_HOME/settings.json: measured with Copilot CLI 1.0.102, inline hooks stop
    // firing once ~/.copilot/hooks holds a file with PascalCase events (VS Code's), so both Copilots'
    // user entries live in one hooks file, where Copilot CLI runs its own camelCase entry.
    case 'copilot-cli':
      return path.join(copilotHome(p), 'hooks', 'bulwark.json');
    case 'vscode':
      return path.join(p.home, '.copilot', 'hooks', 'bulwark.json');
  }
}

/** Whether a hook file is a Copilot-style hooks file (`{"version": 1, "hooks": …}` on its own). */
export function isCopilotHooksFile(file: string): boolean {
  return path.basename(path.dirname(file)) === 'hooks' && file.endsWith('.json');
}

/** Bulwark's entries for a client: one before and one after every tool call, with the timeout set explicitly. */
export function hookEntries(client: AgentId, command: string, timeoutSeconds: number, platform: WrapperPlatform): HookEntry[] {
  const entry = (event: string, value: unknown): HookEntry => ({ client, path: ['hooks', event], value });
  switch (client) {
    case 'claude':
      return ['PreToolUse', 'PostToolUse'].map((e) =>
        entry(e, { matcher: '*', hooks: [{ type: 'command', command, timeout: timeoutSeconds }] }),
      );
    case 'codex':
      return ['PreToolUse', 'PostToolUse'].map((e) =>
        entry(e, { matcher: '.*', hooks: [{ type: 'command', command, timeout: timeoutSeconds }] }),
      );
    case 'gemini':
      // Gemini CLI's hook timeout is in milliseconds.
      return ['BeforeTool', 'AfterTool'].map((e) =>
        entry(e, { matcher: '.*', hooks: [{ name: 'bulwark', type: 'command', command, timeout: timeoutSeconds * 1000 }] }),
      );
    case 'copilot-cli':
      return ['preToolUse', 'postToolUse'].map((e) =>
        entry(e, { type: 'command', [platform === 'win32' ? 'powershell' : 'bash']: command, timeoutSec: timeoutSeconds }),
      );
    case 'vscode':
      return ['PreToolUse', 'PostToolUse'].map((e) =>
        entry(e, { type: 'command', command, ...(platform === 'win32' ? { windows: command } : {}), timeout: timeoutSeconds }),
      );
  }
}
