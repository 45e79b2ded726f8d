// `bulwark hook-server --state-dir DIR`: keeps the hooks' own decider warm while no Bulwark extension
// runs. A hook that finds no bridge decides its call in-process (compiling the rules costs a few
// hundred milliseconds) and starts this server in the background; the next calls ask it over the
// same private socket protocol the extension serves, and take tens of milliseconds. It decides exactly
// as the in-process hook does (LocalDecider: report mode, nobody asked, the same audit chain and
// taint store), serves nothing else, and exits when idle, or as soon as an extension takes over the
// bridge (bridge.json then names another live process).
import fs from 'node:fs';
import path from 'node:path';
import { startBridgeServer } from '../node/hooks/bridge-server';
import { readInfoFile, isProcessAlive } from '../node/hooks/bridge-files';
import { askBridge } from '../node/hooks/bridge-client';
import { BRIDGE_FILE, bulwarkStateDir } from '../node/hooks/state-dir';
import { HandOver, LocalDecider } from './hook-local';

/** Exit after this long without a request (a new agent session starts a new server). */
export const DEFAULT_IDLE_SECONDS = 120;

export async function runHookServer(argv: string[]): Promise<number> {
  let stateArg: string | undefined;
  let idleSeconds = DEFAULT_IDLE_SECONDS;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--state-dir') stateArg = argv[++i];
    else if (a === '--idle-seconds') idleSeconds = Number(argv[++i]);
    else throw new Error(`unknown option \`${a}\` (usage: bulwark hook-server [--state-dir DIR] [--idle-seconds N])`);
  }
  if (!Number.isInteger(idleSeconds) || idleSeconds < 1 || idleSeconds > 86_400)
    throw new Error('--idle-seconds must be a whole number from 1 to 86400');
  const stateDir = bulwarkStateDir(stateArg);
  // Someone (an extension, another hook server) already serves: nothing to do.
  const probe = await askBridge(stateDir, { v: 1, kind: 'ping' }, { timeoutMs: 2000 });
  if (probe.kind !== 'not_running') return 0;

  const logFile = path.join(stateDir, 'hook-server.log');
  const log = (level: string) => (message: string) => {
    try {
      fs.appendFileSync(logFile, `${new Date().toISOString()} ${level} ${message}\n`, { mode: 0o600 });
    } catch {
      /* logging must not stop serving */
    }
  };
  // The extension writes the audit chain itself once it serves: this server stops appending the moment
  // bridge.json names another live process (checked under the audit lock), and the hook asks again.
  const handedOver = () => {
    const current = readInfoFile(path.join(stateDir, BRIDGE_FILE));
    return current.kind === 'ok' && current.info.pid !== process.pid && isProcessAlive(current.info.pid);
  };
  const decider = new LocalDecider(stateDir, () => {
    if (handedOver()) throw new HandOver('a Bulwark extension now serves the hooks');
  });
  let last = Date.now();
  const server = await startBridgeServer({
    stateDir,
    log: { info: log('info'), warn: log('warn'), error: log('error') },
    decide: async (req, signal) => {
      last = Date.now();
      if (signal.aborted)
        return {
          decision: 'block',
          tier: 0,
          minTier: 0,
          level: 'unprotected',
          rules: ['bridge.deadline'],
          reason: 'Blocked: no time was left to decide.',
        };
      const a = req.action;
      return decider.decide({
        agent: req.agent,
        sessionId: a.sessionId,
        policy: req.policy ?? 'default',
        ifc: req.ifc ?? 'default',
        workspace: req.workspace,
        action: {
          ...(a.id ? { id: a.id } : {}),
          type: a.type,
          payload: a.payload,
          ...(a.cwd ? { cwd: a.cwd } : {}),
          ...(a.sandboxed === true && a.type === 'execute_command' ? { sandboxed: true } : {}),
        },
        ...(req.sandbox ? { note: { sandbox: req.sandbox } } : {}),
      });
    },
    record: async () => {
      last = Date.now();
    },
    inspect: async (req) => {
      last = Date.now();
      return decider.inspect(req);
    },
  });
  log('info')(`hook server ${process.pid} serving ${server.info.socket}`);
  fs.rmSync(path.join(stateDir, 'hook-server.starting'), { force: true });
  await new Promise<void>((resolve) => {
    const stop = () => {
      clearInterval(timer);
      resolve();
    };
    const timer = setInterval(() => {
      if (Date.now() - last > idleSeconds * 1000) return stop();
      // An extension (or another server) took over the bridge: the hooks ask it now.
      if (handedOver()) return stop();
    }, 2000);
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await server.dispose();
  log('info')(`hook server ${process.pid} stopped`);
  return 0;
}
