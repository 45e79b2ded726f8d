// Structural rules of the codebase, checked rather than hoped for.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './helpers/repo';

const NODE_BUILTINS = ['fs', 'path', 'os', 'child_process', 'net', 'http', 'https', 'dns', 'crypto', 'url', 'util', 'stream', 'worker_threads', 'process'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}
const importsOf = (file: string) => [...fs.readFileSync(file, 'utf8').matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);

describe('architecture', () => {
  const root = repoRoot();

  it('src/engine imports neither vscode nor Node built-ins nor the outer layers', () => {
    for (const file of sourceFiles(path.join(root, 'src/engine'))) {
      for (const spec of importsOf(file)) {
        const rel = path.relative(root, file);
        assert.notEqual(spec, 'vscode', `${rel} imports vscode`);
        assert.ok(!spec.startsWith('node:') && !NODE_BUILTINS.includes(spec), `${rel} imports the Node built-in ${spec}`);
        if (spec.startsWith('.')) {
          const target = path.relative(root, path.resolve(path.dirname(file), spec));
          assert.ok(target.startsWith('src/engine') || target.startsWith('security'), `${rel} imports ${target} outside the engine`);
        }
      }
    }
  });

  it('only src/vscode imports vscode', () => {
    for (const file of sourceFiles(path.join(root, 'src'))) {
      if (file.startsWith(path.join(root, 'src/vscode'))) continue;
      assert.ok(!importsOf(file).includes('vscode'), `${path.relative(root, file)} imports vscode`);
    }
  });

  it('every contributed command is registered in src/vscode and vice versa', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const contributed = (manifest.contributes.commands as { command: string }[]).map((c) => c.command).sort();
    const code = sourceFiles(path.join(root, 'src/vscode')).map((f) => fs.readFileSync(f, 'utf8')).join('\n');
    const registered = [...code.matchAll(/COMMAND\s*=\s*'([^']+)'/g)].map((m) => m[1]!).sort();
    assert.deepEqual(registered, contributed);
  });

  it('the manifest has the identity the marketplace and code-server expect', () => {
    const m = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    assert.equal(m.publisher, 'bulwark');
    assert.equal(m.name, 'bulwark');
    assert.equal(m.displayName, 'Bulwark');
    assert.equal(m.engines.vscode, '^1.104.0');
    assert.equal(m.main, './dist/extension.js');
  });

  it('.vscodeignore is an allow-list', () => {
    const lines = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    assert.equal(lines[0], '**');
    assert.ok(lines.slice(1).every((l) => l.startsWith('!')), 'after `**` only `!` re-includes');
  });
});
