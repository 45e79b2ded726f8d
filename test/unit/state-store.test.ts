// Bulwark's durable state store (src/node/state-store.ts) on real SQLite: a database that cannot be
// opened gives a store that fails every call.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { FailingStateStore, STATE_FILE, openStateStore } from '../../src/node/state-store';
import { makeTempDir } from './helpers/repo';

describe('state store', () => {
  it('a corrupt state file gives a store that fails every call (fail closed), with the reason', () => {
    const dir = makeTempDir();
    fs.writeFileSync(path.join(dir, STATE_FILE), '{ not json');
    const r = openStateStore(dir);
    assert.ok(r.store instanceof FailingStateStore);
    assert.match(r.error!, /bulwark\.db/);
    assert.throws(() => r.store.get('a', 'b'));
    const ok = openStateStore(makeTempDir());
    assert.equal(ok.durable, true);
    assert.equal(openStateStore(undefined).durable, false);
  });
});
