import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runStoreConformance } from '../testing/store-conformance';

import { SqliteStore } from './sqlite-store';

runStoreConformance('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-conformance-'));
  const store = await SqliteStore.open(join(dir, 'state.db'), { progressIntervalMs: 200, expiryIntervalMs: 100 });
  return { store, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});
