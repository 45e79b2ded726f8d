// Structural rules of the codebase, checked rather than hoped for.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './helpers/repo';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('architecture', () => {
  const root = repoRoot();

  // Which layer may import what (the engine pure, only src/vscode importing vscode, …) is the lint's job:
  // eslint.config.mjs, run by `npm run check`; lint-config.test.ts proves its rules refuse each violation.

  it('every contributed command is registered in src/vscode and vice versa', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const contributed = (manifest.contributes.commands as { command: string }[]).map((c) => c.command).sort();
    const code = sourceFiles(path.join(root, 'src/vscode'))
      .map((f) => fs.readFileSync(f, 'utf8'))
      .join('\n');
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
    const lines = fs
      .readFileSync(path.join(root, '.vscodeignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    assert.equal(lines[0], '**');
    assert.ok(
      lines.slice(1).every((l) => l.startsWith('!')),
      'after `**` only `!` re-includes',
    );
  });
});
