// ensureDirSync: mkdir -p that cannot hang (Node's recursive mkdir never returns under /proc).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ensureDirSync } from '../../src/node/fs-util';
import { makeTempDir } from './helpers/repo';

describe('ensureDirSync', () => {
  it('creates missing parents and returns the first directory it created', () => {
    const tmp = makeTempDir();
    try {
      assert.equal(ensureDirSync(path.join(tmp, 'a', 'b', 'c')), path.join(tmp, 'a'));
      assert.ok(fs.statSync(path.join(tmp, 'a', 'b', 'c')).isDirectory());
      assert.equal(ensureDirSync(path.join(tmp, 'a', 'b')), undefined);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
  it('throws instead of hanging for a path under /proc', function () {
    if (process.platform !== 'linux') this.skip();
    assert.throws(() => ensureDirSync('/proc/bulwark-no-such-dir/x'), /ENOENT|EACCES|EPERM/);
  });
  it('throws when a path component is a file', () => {
    const tmp = makeTempDir();
    try {
      fs.writeFileSync(path.join(tmp, 'f'), 'x');
      assert.throws(() => ensureDirSync(path.join(tmp, 'f', 'sub')), /ENOTDIR|not a directory/);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
