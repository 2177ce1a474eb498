// Measures logger throughput (lines/s) on the built package: `node packages/common/bench/logging.js`.
// Writes to /dev/null through a file stream so that terminal speed is not what is measured.
const { createWriteStream } = require('node:fs');
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { createLogging, defaultLoggingConfig } = require('../lib/index.js');

const N = 200_000;

async function run(name, config, fn) {
  const stderr = createWriteStream('/dev/null');
  const logging = createLogging({ config: { ...defaultLoggingConfig(), ...config }, stderr });
  const log = logging.logger;
  for (let i = 0; i < 10_000; i++) fn(log, i); // warm up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn(log, i);
  const t1 = process.hrtime.bigint();
  await logging.close();
  const perSec = Math.round(N / (Number(t1 - t0) / 1e9));
  console.log(`${name.padEnd(48)} ${perSec.toLocaleString('en-US').padStart(12)} lines/s`);
}

(async () => {
  const line = (log, i) => log.info('Finished syncing', { key: 'default/web-0', durationMs: i, ok: true });
  await run('text, headers (call site captured)', {}, line);
  await run('text, --skip-headers', { skipHeaders: true }, line);
  await run('json', { format: 'json' }, line);
  await run('disabled V(4) line', {}, (log, i) => log.v(4).info('Verbose', { i }));
  await run('disabled V(4) line, --vmodule set', { vmodule: [{ pattern: 'other*', level: 5 }] }, (log, i) =>
    log.v(4).info('Verbose', { i }),
  );
  const dir = mkdtempSync(join(tmpdir(), 'bench-log-'));
  await run('text to --log-file (buffered)', { logToStderr: false, logFile: join(dir, 'x.log') }, line);
})();
