// Runs INSIDE the sandbox (dist/sandbox-init.js), whose network namespace has only loopback. Listens
// on 127.0.0.1:<port>, pipes each connection to the filtering proxy's Unix socket (bound into the
// sandbox), and runs the command with the proxy variables pointing at that port. It decides nothing:
// the proxy outside does. It imports no engine code, so it starts as fast as Node itself.
//
//   node sandbox-init.js --proxy-socket PATH --port N -- cmd args...      (N = 0: any free port)
//
// Exit status: the command's; 128 + signal number if a signal killed it; 125 if the forwarder could not
// start (missing socket, listening failed; the command did not run); 126/127 if the command could not be run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';

const EXIT_SETUP_FAILED = 125;
const FORWARDED_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
const PROXY_VARS = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'];

function fail(message: string, code = EXIT_SETUP_FAILED): never {
  process.stderr.write(`bulwark sandbox-init: ${message}\n`);
  process.exit(code);
}

interface Args {
  socketPath: string;
  port: number;
  command: string[];
}

function parseArgs(argv: string[]): Args {
  let socketPath: string | undefined;
  let port: number | undefined;
  let i = 0;
  for (; i < argv.length && argv[i] !== '--'; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--proxy-socket' && value !== undefined) {
      socketPath = value;
      i++;
    } else if (flag === '--port' && value !== undefined) {
      if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) fail(`--port ${value} is not a port number (0 = any free port)`);
      port = Number(value);
      i++;
    } else fail(`unexpected argument \`${flag}\`; usage: sandbox-init --proxy-socket PATH --port N -- cmd args...`);
  }
  const command = argv.slice(i + 1);
  if (socketPath === undefined) fail('missing --proxy-socket PATH');
  if (port === undefined) fail('missing --port N');
  if (i >= argv.length || command.length === 0) fail('missing the command after `--`');
  return { socketPath, port, command };
}

/** A refusal the client can read, when the proxy itself cannot be reached. */
function unreachable(why: string): string {
  const message = `bulwark sandbox: the network proxy is not reachable (${why.replace(/[^\x20-\x7e]/g, '?')})`;
  const body = `${message}\n`;
  return `HTTP/1.1 502 ${message}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

function forward(client: net.Socket, socketPath: string): void {
  const proxy = net.connect({ path: socketPath, allowHalfOpen: true });
  let connected = false;
  const end = () => {
    client.destroy();
    proxy.destroy();
  };
  client.on('error', end);
  client.once('close', end);
  proxy.once('close', end);
  proxy.on('error', (e) => {
    if (connected || client.destroyed) {
      end();
      return;
    }
    client.end(unreachable(e.message));
    proxy.destroy();
  });
  proxy.once('connect', () => {
    connected = true;
    client.pipe(proxy);
    proxy.pipe(client);
  });
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  let st: fs.Stats;
  try {
    st = fs.statSync(args.socketPath);
  } catch (e) {
    fail(
      `the proxy socket ${args.socketPath} is missing (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); the command was not run`,
    );
  }
  if (!st.isSocket()) fail(`${args.socketPath} is not a socket; the command was not run`);

  const server = net.createServer({ allowHalfOpen: true }, (client) => forward(client, args.socketPath));
  server.once('error', (e) => fail(`cannot listen on 127.0.0.1:${args.port} (${e.message}); the command was not run`));
  server.listen({ host: '127.0.0.1', port: args.port, exclusive: true }, () => {
    server.removeAllListeners('error');
    server.on('error', () => undefined);
    const port = (server.address() as net.AddressInfo).port;
    const url = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = { ...process.env, NO_PROXY: '', no_proxy: '' };
    for (const v of PROXY_VARS) env[v] = url;
    run(args.command, env);
  });
}

function run(command: string[], env: NodeJS.ProcessEnv): void {
  // The handlers are in place before the command starts. The command can print before spawn() returns here, and a
  // signal sent as soon as it has (a test harness, a supervisor) would otherwise end this process by default and
  // leave the command running without it. Node runs signal handlers from the event loop, never inside spawn(), so
  // by the time one runs the child is known.
  const started: { child?: ReturnType<typeof spawn> } = {};
  for (const sig of FORWARDED_SIGNALS) process.on(sig, (s: NodeJS.Signals) => started.child?.kill(s));
  const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env });
  started.child = child;
  child.once('error', (e: NodeJS.ErrnoException) => {
    fail(`cannot run \`${command[0]}\` (${e.code ?? e.message})`, e.code === 'ENOENT' ? 127 : 126);
  });
  child.once('exit', (code, signal) => {
    const n = signal ? os.constants.signals[signal] : undefined;
    process.exit(code ?? (n !== undefined ? 128 + n : 1));
  });
}

main();
