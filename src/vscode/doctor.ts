// "Bulwark: Doctor": a Markdown report of what protects this machine's commands: the OS sandbox (its
// mechanism, version and what it enforces, or why there is none and how to fix it), whether the
// sandbox helper process answers, and the bulwark.sandbox.* settings in effect. Opened as an untitled
// Markdown document: nothing runs in it, and the user can keep or share it.
import * as vscode from 'vscode';
import type { SandboxSettings } from '../node/run-command';
import { probeSandbox, type SandboxStatus } from '../node/sandbox/probe';
import type { EngineHost } from './engine-host';
import { sandboxSettings } from './run-command';

export const DOCTOR_COMMAND = 'bulwark.doctor';

export function registerDoctor(context: vscode.ExtensionContext, host: EngineHost): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(DOCTOR_COMMAND, async (): Promise<string> => {
      const [local, helper] = await Promise.all([probeSandbox({ fresh: true }), host.sandboxHelper().probe({ fresh: true })]);
      const { settings, problems } = sandboxSettings();
      const report = doctorReport({ local, helper, settings, problems, platform: process.platform });
      const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: report });
      await vscode.window.showTextDocument(doc, { preview: false });
      return report;
    }),
  );
}

/** One line of report text (the document is read as source, so nothing is escaped). */
const md = (s: string): string => s.replace(/\s*\n\s*/g, ' ');
const code = (s: string): string => `\`${s.replace(/`/g, "'")}\``;

export function doctorReport(r: {
  local: SandboxStatus;
  helper: SandboxStatus;
  settings: SandboxSettings;
  problems: readonly string[];
  platform: string;
}): string {
  const s = r.local;
  const lines = ['# Bulwark Doctor', '', '## OS sandbox', ''];
  if (s.available) {
    lines.push(
      `**Available:** ${md(s.mechanism)}${s.version ? ` ${md(s.version)}` : ''}${s.program ? ` (${code(s.program)})` : ''}.`,
      '',
      'Commands from `bulwark_run_command` and the sandboxed terminal run inside it. It enforces:',
      '',
      ...s.enforces.map((e) => `- ${md(e)}`),
    );
  } else {
    lines.push(`**Unavailable** (${md(s.mechanism)}): ${md(s.reason ?? 'no reason given')}.`, '');
    if (s.fix) lines.push(`**To fix:** ${md(s.fix)}.`, '');
    if (r.platform === 'win32') lines.push('There is no OS sandbox for Windows yet.', '');
    lines.push(
      r.settings.unsandboxed === 'tier3'
        ? 'Commands run **without a sandbox** after you approve each one in a dialog (`bulwark.sandbox.unsandboxed` is `tier3`).'
        : 'Every command from `bulwark_run_command` is refused until there is a sandbox (`bulwark.sandbox.unsandboxed` is `refuse`), and the sandboxed terminal does not open.',
    );
  }
  lines.push('', '## Sandbox helper process', '');
  if (r.helper.available) lines.push('The helper (`dist/sandbox-helper.js`) started and answered: it sees the same sandbox.');
  else if (s.available)
    lines.push(
      `**The helper does not work:** ${md(r.helper.reason ?? 'no reason given')}. Commands are refused until it does.${r.helper.fix ? ` To fix: ${md(r.helper.fix)}.` : ''}`,
    );
  else lines.push(`The helper answered: no sandbox (${md(r.helper.reason ?? 'no reason given')}).`);
  const c = r.settings;
  lines.push(
    '',
    '## Settings in effect (your user settings; workspace values are ignored)',
    '',
    '| setting | value |',
    '| --- | --- |',
    `| bulwark.sandbox.unsandboxed | ${code(c.unsandboxed)} |`,
    `| bulwark.sandbox.allowedHosts | ${c.allowedHosts.length ? c.allowedHosts.map(code).join(', ') : 'none: no network'} |`,
    `| bulwark.sandbox.passEnvironment | ${c.passEnvironment.length ? c.passEnvironment.map(code).join(', ') : 'none beyond the allow-list'} |`,
    `| bulwark.sandbox.timeoutSeconds | ${c.timeoutSeconds} |`,
  );
  if (r.problems.length) lines.push('', '**Setting problems:**', '', ...r.problems.map((p) => `- ${md(p)}`));
  lines.push('');
  return lines.join('\n');
}
