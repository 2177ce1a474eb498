#!/usr/bin/env node
// `npm test`: every test of the repository (unit, integration, e2e) in one Jest run, after build and lint.
// Extra arguments go to Jest (`npm test -- packages/api`).
const { spawnSync } = require('node:child_process');
const args = [require.resolve('jest/bin/jest'), '--ci', ...process.argv.slice(2)];
const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(r.status ?? 1);
