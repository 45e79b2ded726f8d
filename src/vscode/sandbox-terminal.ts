// "Bulwark: Open Sandboxed Terminal": the user's shell inside the OS sandbox, as a VS Code
// Pseudoterminal fed by the sandbox helper's interactive run. With util-linux `script` the shell gets
// a real pseudo-terminal inside the sandbox (line editing, Ctrl+C, job control); without it, a plain
// interactive shell on pipes with local echo. Output is redacted by the runner before it is shown.
// The same sandbox as bulwark_run_command: workspace folders writable, credentials hidden, network
// only to bulwark.sandbox.allowedHosts. Closing the terminal kills the sandbox and all in it.
import * as vscode from 'vscode';
import fs from 'node:fs';
import path from 'node:path';
import { SandboxPlanError } from '../engine';
import type { InteractiveRun } from '../node/sandbox/helper-client';
import { sandboxEnvironment } from '../node/sandbox/environment';
import { findOnPath } from '../node/find-on-path';
import { probeSandbox } from '../node/sandbox/probe';
import type { ProxyDecision } from '../node/sandbox/proxy';
import type { EngineHost } from './engine-host';
import { sandboxSettings, workspaceRoots } from './run-command';
import { errorMessage } from '../engine/error-message';

export const OPEN_SANDBOXED_TERMINAL_COMMAND = 'bulwark.openSandboxedTerminal';
/** A terminal session's own limit (the runner needs one); the user closes it long before. */
const TERMINAL_TIMEOUT_MS = 24 * 60 * 60 * 1000;

export function registerSandboxTerminal(context: vscode.ExtensionContext, host: EngineHost): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(OPEN_SANDBOXED_TERMINAL_COMMAND, async (): Promise<vscode.Terminal | undefined> => {
      const refuse = (why: string) => {
        void vscode.window.showErrorMessage(`Bulwark: no sandboxed terminal: ${why}`);
        return undefined;
      };
      const status = await probeSandbox();
      if (!status.available) return refuse(`${status.reason ?? 'there is no OS sandbox'}.${status.fix ? ` To fix: ${status.fix}.` : ''}`);
      const roots = workspaceRoots();
      if (roots.length === 0) return refuse('open a folder first: the sandbox lets the shell write only inside the workspace folders.');
      let plan;
      try {
        plan = (await host.engine()).sandboxPlan(roots);
      } catch (e) {
        return refuse(e instanceof SandboxPlanError ? `${e.message}.` : `the sandbox could not be planned (${errorMessage(e)}).`);
      }
      const { settings } = sandboxSettings();
      const { env } = sandboxEnvironment(process.env, settings.passEnvironment, { TERM: 'xterm-256color', COLORTERM: 'truecolor' });
      const shell =
        process.env.SHELL && path.isAbsolute(process.env.SHELL) && fs.existsSync(process.env.SHELL) ? process.env.SHELL : '/bin/bash';
      const script = findOnPath('script');
      const banner = [
        `Bulwark sandbox (${status.mechanism}${status.version ? ` ${status.version}` : ''}): writable ${plan.writable.join(', ')}; ${plan.hidden.length} credential locations hidden;`,
        `network: ${settings.allowedHosts.length ? `only ${settings.allowedHosts.join(', ')} (through Bulwark's proxy)` : 'none'}.${script ? '' : ' (no `script` command: a plain shell without a terminal inside)'}`,
      ];
      const pty = new SandboxPseudoterminal(
        (dims) =>
          host.sandboxHelper().runInteractive(
            {
              command: script
                ? // `script` gives the shell a pseudo-terminal inside the sandbox, sized like this one.
                  [
                    script,
                    '-qfec',
                    `stty cols ${dims?.columns ?? 120} rows ${dims?.rows ?? 30} 2>/dev/null; exec ${shellQuote(shell)} -i`,
                    '/dev/null',
                  ]
                : [shell, '-i'],
              cwd: roots[0]!,
              plan,
              env: { ...env, ...(dims ? { COLUMNS: String(dims.columns), LINES: String(dims.rows) } : {}) },
              timeoutMs: TERMINAL_TIMEOUT_MS,
              allowHosts: [...settings.allowedHosts],
            },
            {
              stdout: (t) => pty.output(t),
              stderr: (t) => pty.output(t),
              network: (d) => pty.network(d),
            },
          ),
        banner,
        script !== undefined,
      );
      const terminal = vscode.window.createTerminal({ name: 'Bulwark sandbox', pty, iconPath: new vscode.ThemeIcon('shield') });
      terminal.show();
      return terminal;
    }),
  );
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

class SandboxPseudoterminal implements vscode.Pseudoterminal {
  private readonly written = new vscode.EventEmitter<string>();
  private readonly closed = new vscode.EventEmitter<number | void>();
  readonly onDidWrite = this.written.event;
  readonly onDidClose = this.closed.event;
  private run: InteractiveRun | undefined;
  private ended = false;
  private lastWasCR = false;
  /** Without a terminal inside: the line typed so far (echoed here, sent on Enter). */
  private line = '';

  constructor(
    private readonly start: (dims: vscode.TerminalDimensions | undefined) => InteractiveRun,
    private readonly banner: readonly string[],
    private readonly hasTty: boolean,
  ) {}

  open(dims: vscode.TerminalDimensions | undefined): void {
    this.written.fire(`\x1b[2m${this.banner.join('\r\n')}\x1b[0m\r\n`);
    this.run = this.start(dims);
    void this.run.result.then((r) => {
      this.ended = true;
      const how =
        r.status === 'exited'
          ? `exited with code ${r.exitCode}`
          : r.status === 'sandbox_failed'
            ? `could not run in the sandbox: ${r.error ?? 'unknown error'}${r.fix ? `. To fix: ${r.fix}` : ''}`
            : r.status === 'signaled'
              ? `ended by ${r.signal}`
              : r.status === 'timed_out'
                ? 'was stopped after 24 hours'
                : 'was stopped';
      const violations = r.violations.map((v) => `\r\n[bulwark] ${v.ruleId}: ${v.what}`).join('');
      this.written.fire(`${violations}\r\n\x1b[2m[bulwark] the sandboxed shell ${how}. Press any key to close.\x1b[0m\r\n`);
    });
  }

  /** Output of the shell, with bare line feeds made into CR LF (a shell on pipes writes bare ones). */
  output(text: string): void {
    let out = '';
    for (const ch of text) {
      if (ch === '\n' && !this.lastWasCR) out += '\r';
      out += ch;
      this.lastWasCR = ch === '\r';
    }
    this.written.fire(out);
  }

  network(d: ProxyDecision): void {
    if (!d.allowed)
      this.written.fire(`\r\n\x1b[33m[bulwark] refused a connection to ${d.host || '?'}:${d.port} (${d.rule}): ${d.reason}\x1b[0m\r\n`);
  }

  handleInput(data: string): void {
    if (this.ended) {
      this.closed.fire();
      return;
    }
    if (this.hasTty) {
      this.run?.write(data);
      return;
    }
    // No terminal inside: a minimal line editor (echo, backspace, Enter, Ctrl+D, Ctrl+C ends the shell).
    for (const ch of data) {
      if (ch === '\r') {
        this.written.fire('\r\n');
        this.run?.write(`${this.line}\n`);
        this.line = '';
      } else if (ch === '\x7f') {
        if (this.line) {
          this.line = this.line.slice(0, -1);
          this.written.fire('\b \b');
        }
      } else if (ch === '\x04') {
        if (!this.line) this.run?.end();
      } else if (ch === '\x03') {
        this.written.fire('^C\r\n');
        this.run?.cancel();
      } else if (ch >= ' ') {
        this.line += ch;
        this.written.fire(ch);
      }
    }
  }

  close(): void {
    this.run?.cancel();
    this.written.dispose();
    this.closed.dispose();
  }
}
