// A leader election candidate as its own process, for leader-election.integration.test.ts (which kills it).
// Runs the built package (lib/): usage: node leader-candidate.js <server> <ca-file> <identity> <lease-ms> <renew-ms> <retry-ms>
'use strict';
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const { Clientset, LeaderElector, newResourceLock, RestClient } = require(
  join(__dirname, '..', '..', 'lib', 'index.js'),
);

const [server, caFile, identity, leaseMs, renewMs, retryMs] = process.argv.slice(2);
// The token the server's --token-auth-file knows (support.ts).
const rest = new RestClient({ server, ca: readFileSync(caFile), token: 'integration-test-token', qps: 0 });
const log = (ev) => process.stdout.write(`${JSON.stringify({ ev, id: identity, t: Date.now() })}\n`);
const ac = new AbortController();
process.on('SIGTERM', () => ac.abort());
const config = {
  leaderElect: true,
  leaseDurationMs: Number(leaseMs),
  renewDeadlineMs: Number(renewMs),
  retryPeriodMs: Number(retryMs),
  resourceLock: 'leases',
  resourceName: 'it-lock',
  resourceNamespace: 'system',
};
const elector = new LeaderElector({
  lock: newResourceLock(new Clientset(rest), config, identity),
  identity,
  config,
  callbacks: {
    onStartedLeading: (signal) => {
      log('start');
      return new Promise((resolve) => signal.addEventListener('abort', resolve));
    },
    onStoppedLeading: () => log('stop'),
  },
});
log('candidate');
elector.run(ac.signal).then(
  () => {
    log('exit');
    rest.close();
    process.exit(0);
  },
  (err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  },
);
