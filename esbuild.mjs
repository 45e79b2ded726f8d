// One esbuild entry per surface. `node esbuild.mjs` builds the shipped bundles into dist/;
// `--tests` / `--bench` build the mocha suites and the benchmark into out/ (not shipped).
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { load as loadYaml } from 'js-yaml';

const args = new Set(process.argv.slice(2));
const production = args.has('--production');
const root = path.dirname(new URL(import.meta.url).pathname);

// Security data (rules, denylists, policies) lives as YAML under security/ and is compiled into the
// bundles, so an agent that edits files on disk cannot change what a running Bulwark enforces.
const yamlPlugin = {
  name: 'yaml',
  setup(build) {
    build.onLoad({ filter: /\.ya?ml$/ }, async (a) => {
      const text = await fs.promises.readFile(a.path, 'utf8');
      return { contents: JSON.stringify(loadYaml(text, { filename: a.path })), loader: 'json' };
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

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  plugins: [yamlPlugin],
};

/** Shipped surfaces: one entry each. */
const surfaces = [
  { entryPoints: ['src/vscode/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] },
  { entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
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
    await esbuild.build({ ...common, entryPoints: entries, outdir: 'out/test/unit', outbase: 'test/unit', packages: 'external', external: ['vscode'] });
    // The e2e extension-host suite runs inside VS Code: bundled separately, `vscode` stays external.
    const hostTests = walk('test/suite', (p) => p.endsWith('.ts'));
    if (hostTests.length) await esbuild.build({ ...common, entryPoints: hostTests, outdir: 'out/test/suite', outbase: 'test/suite', packages: 'external', external: ['vscode'] });
    copyAssets('out/test/unit');
  }
  if (args.has('--bench')) {
    await esbuild.build({ ...common, entryPoints: ['bench/bench.ts'], outfile: 'out/bench/bench.js', packages: 'external' });
    copyAssets('out/bench');
  }
  if (!args.has('--tests') && !args.has('--bench')) {
    await Promise.all(surfaces.map((s) => esbuild.build({ ...common, ...s })));
    copyAssets('dist');
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
