// Test helpers: locate the repository, load YAML data, make throw-away directories.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { load as parseYaml } from 'js-yaml';

/** The repository root: compiled tests run from out/test/unit, so walk up to package.json. */
export function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('repository root not found from ' + __dirname);
    dir = up;
  }
  return dir;
}

export function loadYaml<T = unknown>(relativePath: string): T {
  const file = path.join(repoRoot(), relativePath);
  return parseYaml(fs.readFileSync(file, 'utf8'), { filename: file }) as T;
}

export function yamlFilesUnder(relativeDir: string): string[] {
  const dir = path.join(repoRoot(), relativeDir);
  return fs
    .readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => path.join(relativeDir, f));
}

/** A fresh directory under the OS temp dir, resolved (no symlinked /tmp surprises). */
export function makeTempDir(prefix = 'bulwark-test-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}
