// Builds bench/everyday.ts into $BULWARK_OUT_DIR/bench/everyday.js and runs it (the issue 14 figures).
// The same esbuild options as esbuild.mjs's --bench build (security YAML and the WAT keyword walk compiled
// in, packages external, the tree-sitter wasm files beside the bundle); until esbuild.mjs has an entry for it.
//   cd /work/main && source scripts/bootstrap.sh && BULWARK_OUT_DIR=out-corpus node bench/corpus/run-everyday.mjs
// BULWARK_EVERYDAY_PRESETS=default,strict limits the presets; --build-only builds without running.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { load as loadYaml } from 'js-yaml';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
process.chdir(root);
const OUT = process.env.BULWARK_OUT_DIR ?? 'out';

const yamlPlugin = {
  name: 'yaml',
  setup(build) {
    build.onLoad({ filter: /\.ya?ml$/ }, async (a) => ({ contents: JSON.stringify(loadYaml(await fs.promises.readFile(a.path, 'utf8'), { filename: a.path })), loader: 'json' }));
  },
};
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

const outfile = path.join(OUT, 'bench', 'everyday.js');
await esbuild.build({
  stdin: { contents: "import { main } from './bench/everyday';\nmain().catch((e) => { console.error(e); process.exit(1); });\n", resolveDir: root, sourcefile: 'everyday-main.ts', loader: 'ts' },
  outfile, bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: 'linked', logLevel: 'warning',
  plugins: [yamlPlugin, watPlugin], packages: 'external',
  alias: { 'jsonc-parser': './node_modules/jsonc-parser/lib/esm/main.js' },
});
for (const [from, to] of [['node_modules/web-tree-sitter/web-tree-sitter.wasm', 'web-tree-sitter.wasm'], ['node_modules/tree-sitter-bash/tree-sitter-bash.wasm', 'tree-sitter-bash.wasm']]) {
  fs.copyFileSync(from, path.join(OUT, 'bench', to));
}
if (!process.argv.includes('--build-only')) {
  const r = spawnSync(process.execPath, ['--enable-source-maps', outfile], { stdio: 'inherit', env: { ...process.env, BULWARK_OUT_DIR: OUT } });
  process.exit(r.status ?? 1);
}
