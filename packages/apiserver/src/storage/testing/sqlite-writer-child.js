// Child process of the SQLite crash test: opens the store given on the command line and writes until killed,
// printing one line per ACKNOWLEDGED write: `ack <key> <value> <revision>`. Eight writers run at once so that group
// commit batches are in flight when the parent SIGKILLs us. A line is printed only after the store resolved.
require('./ts-register');
const { SqliteStore } = require('../sqlite/sqlite-store.ts');

async function main() {
  const store = await SqliteStore.open(process.argv[2]);
  const enc = new TextEncoder();
  process.stdout.write('ready\n');
  const writer = async (w) => {
    for (let i = 0; ; i++) {
      const key = `/crash/w${w}/k${String(i).padStart(6, '0')}`;
      const value = `v${w}-${i}`;
      const kv = await store.create(key, enc.encode(value));
      process.stdout.write(`ack ${key} ${value} ${kv.modRevision}\n`);
      if (i % 3 === 0) {
        // some history: an update of the same key
        const kv2 = await store.update(key, enc.encode(`${value}-u`), kv.modRevision);
        process.stdout.write(`ack ${key} ${value}-u ${kv2.modRevision}\n`);
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
}

main().catch((e) => {
  process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
