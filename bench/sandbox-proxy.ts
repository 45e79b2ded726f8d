// Sandbox network proxy figures (reported, not asserted). MB = 10^6 bytes.
//   benchProxyThroughput: one large download from a local HTTP server, through the filtering proxy
//     (a CONNECT tunnel over its Unix socket, the hop a sandboxed command's traffic takes) and directly.
//   benchForwarderStartup: how long the in-sandbox forwarder (dist/sandbox-init.js) adds before the
//     command runs, against plain `node -e ''`.
// Standalone: bundle this file and run it with `node sandbox-proxy.js [path/to/sandbox-init.js]`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startFilteringProxy } from '../src/node/sandbox/proxy';

const DEFAULT_MIB = Number(process.env.BULWARK_BENCH_PROXY_MIB ?? 256);

function blobServer(total: number): Promise<{ server: http.Server; port: number }> {
  const chunk = Buffer.alloc(1024 * 1024, 0x61);
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Length': total, 'Content-Type': 'application/octet-stream' });
    let left = total;
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as net.AddressInfo).port })),
  );
}

/** A socket through the proxy's CONNECT tunnel, once the proxy answered 200. */
function tunnel(socketPath: string, authority: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(socketPath);
    let head = '';
    const onData = (d: Buffer) => {
      head += d.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      s.removeListener('data', onData);
      if (!head.startsWith('HTTP/1.1 200')) {
        s.destroy();
        reject(new Error(`proxy refused: ${head.split('\r\n')[0]}`));
        return;
      }
      if (end + 4 !== head.length) {
        s.destroy();
        reject(new Error('unexpected bytes after the CONNECT answer'));
        return;
      }
      resolve(s);
    };
    s.on('data', onData);
    s.once('error', reject);
    s.on('connect', () => s.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
  });
}

/** Downloads the blob, counting bytes; returns the seconds it took from request to last byte. */
function download(port: number, createConnection?: () => net.Socket): Promise<{ seconds: number; bytes: number }> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: '/blob', ...(createConnection ? { createConnection } : { agent: false }) },
      (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => {
          bytes += d.length;
        });
        res.on('end', () => resolve({ seconds: Number(process.hrtime.bigint() - t0) / 1e9, bytes }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

export async function benchProxyThroughput(mib = DEFAULT_MIB): Promise<{ proxiedMBps: number; directMBps: number; bytes: number }> {
  const total = mib * 1024 * 1024;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-bench-proxy-'));
  fs.chmodSync(dir, 0o700);
  const { server, port } = await blobServer(total);
  const proxy = await startFilteringProxy({ socketPath: path.join(dir, 'proxy.sock'), allowHosts: [`127.0.0.1:${port}`] });
  try {
    const via = async () => {
      const s = await tunnel(proxy.socketPath!, `127.0.0.1:${port}`);
      return download(port, () => s);
    };
    await download(port); // warm both paths once
    await via();
    const direct = await download(port);
    const proxied = await via();
    if (direct.bytes !== total || proxied.bytes !== total)
      throw new Error(`short transfer: direct ${direct.bytes}, proxied ${proxied.bytes} of ${total} bytes`);
    const mbps = (r: { seconds: number; bytes: number }) => +(r.bytes / 1e6 / r.seconds).toFixed(0);
    return { proxiedMBps: mbps(proxied), directMBps: mbps(direct), bytes: total };
  } finally {
    await proxy.close();
    server.closeAllConnections();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function timeRun(argv: string[]): Promise<number> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const cp = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' });
    cp.on('error', reject);
    cp.on('close', (code) =>
      code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`${argv.join(' ')} exited ${code}`)),
    );
  });
}

/** Wall time of `node sandbox-init.js ... -- true` against `node -e ''` (the floor any Node program pays). */
export async function benchForwarderStartup(
  bundle: string,
  runs = 30,
): Promise<{ forwarderP50ms: number; nodeP50ms: number; addedP50ms: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-bench-init-'));
  fs.chmodSync(dir, 0o700);
  const proxy = await startFilteringProxy({ socketPath: path.join(dir, 'proxy.sock'), allowHosts: [] });
  try {
    const forwarder = [process.execPath, bundle, '--proxy-socket', proxy.socketPath!, '--port', '0', '--', 'true'];
    const bare = [process.execPath, '-e', ''];
    const f: number[] = [];
    const n: number[] = [];
    for (let i = 0; i < 3; i++) {
      await timeRun(forwarder);
      await timeRun(bare);
    }
    for (let i = 0; i < runs; i++) {
      f.push(await timeRun(forwarder));
      n.push(await timeRun(bare));
    }
    const p50 = (xs: number[]) => +[...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(1);
    return { forwarderP50ms: p50(f), nodeP50ms: p50(n), addedP50ms: +(p50(f) - p50(n)).toFixed(1) };
  } finally {
    await proxy.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// Run directly (not when bundled into bench.js): print both figures.
if (/sandbox-proxy\.js$/.test(process.argv[1] ?? '')) {
  void (async () => {
    console.log('proxy throughput:', await benchProxyThroughput());
    const bundle = process.argv[2];
    if (bundle) console.log('forwarder startup:', await benchForwarderStartup(bundle));
  })().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
