// The Tier 2 evaluator's canary file (src/node/tier2-setup.ts): created once, mode 0600, never
// silently replaced.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CANARY_FILE, loadOrCreateCanary } from '../../src/node/tier2-setup';
import { makeTempDir } from './helpers/repo';

describe('Tier 2 canary file', () => {
  it('creates a 64-hex canary once, mode 0600, and reads the same one back', () => {
    const dir = path.join(makeTempDir(), 'state');
    const c1 = loadOrCreateCanary(dir);
    assert.match(c1, /^[0-9a-f]{64}$/);
    const file = path.join(dir, CANARY_FILE);
    if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(loadOrCreateCanary(dir), c1);
  });

  it('a canary file with bad content is an error naming the file, and is not replaced', () => {
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, CANARY_FILE), 'not-a-canary\n');
    assert.throws(
      () => loadOrCreateCanary(dir),
      (e: Error) => e.message.includes(path.join(dir, CANARY_FILE)),
    );
    assert.equal(fs.readFileSync(path.join(dir, CANARY_FILE), 'utf8'), 'not-a-canary\n');
  });
});
