// One esbuild entry per surface. `node esbuild.mjs` builds the shipped bundles into dist/;
// `--tests` / `--bench` build the mocha suites and the benchmark into out/ (not shipped).
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { load as loadYaml } from 'js-yaml';

const args = new Set(process.argv.slice(2));
// Test/bench output folder (relative to the repo, so `packages: 'external'` still resolves node_modules);
// parallel work on one checkout can use separate folders.
const OUT = process.env.BULWARK_OUT_DIR ?? 'out';
const production = args.has('--production');
const root = path.dirname(new URL(import.meta.url).pathname);

// Security data (rules, denylists, policies) lives as YAML under security/ and is compiled into the
// bundles, so an agent that edits files on disk cannot change what a running Bulwark enforces.
// The shipped bundles leave out the rules' `examples` (test data, checked by the unit tests on the
// files themselves): they are synthetic secrets and attacks that secret scanners rightly flag.
function withoutExamples(v) {
  if (Array.isArray(v)) return v.map(withoutExamples);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => k !== 'examples')
        .map(([k, x]) => [k, withoutExamples(x)]),
    );
  return v;
}
const yamlPlugin = (stripExamples) => ({
  name: 'yaml',
  setup(build) {
    build.onLoad({ filter: /\.ya?ml$/ }, async (a) => {
      const data = loadYaml(await fs.promises.readFile(a.path, 'utf8'), { filename: a.path });
      return { contents: JSON.stringify(stripExamples ? withoutExamples(data) : data), loader: 'json' };
    });
  },
});

// Our own WebAssembly (the keyword walk of the secret scanner) is written as WAT and assembled here
// with wabt, so the repository holds the readable source and never a binary built elsewhere.
let wabt;
const watPlugin = {
  name: 'wat',
  setup(build) {
    build.onLoad({ filter: /\.wat$/ }, async (a) => {
      wabt ??= await (await import('wabt')).default();
      const mod = wabt.parseWat(a.path, await fs.promises.readFile(a.path, 'utf8'));
      try {
        mod.validate();
        return { contents: new Uint8Array(mod.toBinary({}).buffer), loader: 'binary' };
      } finally {
        mod.destroy();
      }
    });
  },
};

// WebAssembly assets that the bundles load at run time, copied beside them.
const wasmAssets = [
  ['node_modules/web-tree-sitter/web-tree-sitter.wasm', 'web-tree-sitter.wasm'],
  ['node_modules/tree-sitter-bash/tree-sitter-bash.wasm', 'tree-sitter-bash.wasm'],
];
function copyAssets(outdir) {
  fs.mkdirSync(path.join(root, outdir), { recursive: true });
  for (const [from, to] of wasmAssets) fs.copyFileSync(path.join(root, from), path.join(root, outdir, to));
}

// Native modules cannot be bundled: they stay external and are copied beside the bundles
// (dist/node_modules), only the binaries for the platform that builds them.
const nativeExternals = ['onnxruntime-node', 'better-sqlite3'];
function copyNativeModules(outdir) {
  const dest = path.join(root, outdir, 'node_modules');
  const copy = (from, to) => {
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.cpSync(from, to, { recursive: true });
  };
  const ort = path.join(root, 'node_modules/onnxruntime-node');
  const binDir = `bin/napi-v6/${process.platform}/${process.arch}`;
  fs.rmSync(path.join(dest, 'onnxruntime-node'), { recursive: true, force: true });
  copy(path.join(ort, 'package.json'), path.join(dest, 'onnxruntime-node/package.json'));
  for (const f of fs.readdirSync(path.join(ort, 'dist')).filter((f) => f.endsWith('.js')))
    copy(path.join(ort, 'dist', f), path.join(dest, 'onnxruntime-node/dist', f));
  if (fs.existsSync(path.join(ort, binDir))) copy(path.join(ort, binDir), path.join(dest, 'onnxruntime-node', binDir));
  fs.rmSync(path.join(dest, 'onnxruntime-common'), { recursive: true, force: true });
  copy(path.join(root, 'node_modules/onnxruntime-common'), path.join(dest, 'onnxruntime-common'));
  // better-sqlite3 13 is N-API and ships prebuilds: the same file loads in Node 22+ and Electron.
  const sqlite = path.join(root, 'node_modules/better-sqlite3');
  fs.rmSync(path.join(dest, 'better-sqlite3'), { recursive: true, force: true });
  copy(path.join(sqlite, 'package.json'), path.join(dest, 'better-sqlite3/package.json'));
  copy(path.join(sqlite, 'lib'), path.join(dest, 'better-sqlite3/lib'));
  const prebuild = `prebuilds/${process.platform}-${process.arch}.node`;
  if (fs.existsSync(path.join(sqlite, prebuild))) copy(path.join(sqlite, prebuild), path.join(dest, 'better-sqlite3', prebuild));
  for (const d of ['Release', 'Debug']) {
    const built = path.join(sqlite, 'build', d, 'better_sqlite3.node');
    if (fs.existsSync(built)) copy(built, path.join(dest, 'better-sqlite3/build', d, 'better_sqlite3.node'));
  }
}

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  plugins: [yamlPlugin(false), watPlugin],
  // jsonc-parser's `main` is a UMD wrapper whose requires esbuild cannot follow; its ES module build bundles cleanly.
  alias: { 'jsonc-parser': './node_modules/jsonc-parser/lib/esm/main.js' },
};

/** Shipped surfaces: one entry each. */
const surfaces = [
  { entryPoints: ['src/vscode/extension.ts'], outfile: 'dist/extension.js', external: ['vscode', ...nativeExternals] },
  { entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' }, external: nativeExternals },
  // Runs inside the OS sandbox: the network forwarder to the filtering proxy. No engine in it (starts fast).
  { entryPoints: ['src/sandbox-init/main.ts'], outfile: 'dist/sandbox-init.js' },
  { entryPoints: ['src/sandbox-helper/main.ts'], outfile: 'dist/sandbox-helper.js' },
];

function walk(dir, pred) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p, pred) : pred(p) ? [p] : [];
  });
}

async function main() {
  if (args.has('--tests')) {
    const entries = walk('test/unit', (p) => p.endsWith('.test.ts'));
    if (entries.length === 0) throw new Error('no unit tests found under test/unit');
    await esbuild.build({
      ...common,
      entryPoints: entries,
      outdir: `${OUT}/test/unit`,
      outbase: 'test/unit',
      packages: 'external',
      external: ['vscode'],
    });
    // The e2e extension-host suite runs inside VS Code: bundled separately, `vscode` stays external.
    const hostTests = walk('test/suite', (p) => p.endsWith('.ts'));
    if (hostTests.length)
      await esbuild.build({
        ...common,
        entryPoints: hostTests,
        outdir: `${OUT}/test/suite`,
        outbase: 'test/suite',
        packages: 'external',
        external: ['vscode'],
      });
    copyAssets(`${OUT}/test/unit`);
  }
  if (args.has('--bench')) {
    await esbuild.build({ ...common, entryPoints: ['bench/bench.ts'], outfile: `${OUT}/bench/bench.js`, packages: 'external' });
    copyAssets(`${OUT}/bench`);
  }
  if (!args.has('--tests') && !args.has('--bench')) {
    await Promise.all(surfaces.map((s) => esbuild.build({ ...common, plugins: [yamlPlugin(true), watPlugin], ...s })));
    // The audit webview's page script: runs in the browser sandbox of the webview, not in Node.
    if (fs.existsSync(path.join(root, 'src/webview/main.ts'))) {
      await esbuild.build({
        entryPoints: ['src/webview/main.ts'],
        outfile: 'dist/webview.js',
        bundle: true,
        platform: 'browser',
        format: 'iife',
        target: 'es2022',
        sourcemap: production ? false : 'linked',
        minify: production,
        logLevel: 'warning',
      });
    }
    copyAssets('dist');
    copyNativeModules('dist');
  }
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
