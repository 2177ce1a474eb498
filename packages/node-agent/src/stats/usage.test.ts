/** The usage readers on this machine's /proc, with a real process tree, and on cgroup v1 files. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { cgroupV1Usage, nodeUsage, processTreeUsage, readProcessTable } from './usage';

const onLinux = process.platform === 'linux' ? test : test.skip;

let child: ChildProcess | undefined;
let dir: string | undefined;

afterEach(() => {
  if (child?.pid) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

onLinux("the node's CPU time and working set", () => {
  const u = nodeUsage(1234);
  expect(u.cpu?.timestamp).toBe(1234);
  expect(u.cpu?.usageCoreNanoSeconds).toBeGreaterThan(0);
  expect(u.memory?.workingSetBytes).toBeGreaterThan(0);
});

onLinux("a process tree's CPU time grows while its children burn CPU; its memory is its resident set", async () => {
  // A shell whose short-lived children do the work: their time reaches the shell's as they are reaped.
  child = spawn('sh', ['-c', 'while :; do head -c 200000 /dev/urandom | md5sum >/dev/null; done'], {
    detached: true,
    stdio: 'ignore',
  });
  const pid = child.pid!;
  const first = processTreeUsage(readProcessTable(), pid);
  expect(first?.memory?.workingSetBytes).toBeGreaterThan(0);
  const start = first?.cpu?.usageCoreNanoSeconds ?? 0;
  const deadline = Date.now() + 60_000;
  let now = start;
  while (now <= start && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    now = processTreeUsage(readProcessTable(), pid)?.cpu?.usageCoreNanoSeconds ?? 0;
  }
  expect(now).toBeGreaterThan(start);
  expect(processTreeUsage(readProcessTable(), 0x7ffffffe)).toBeUndefined();
});

test("a cgroup v1 container: cpuacct's nanoseconds, memory in use less inactive file pages", () => {
  dir = mkdtempSync(join(tmpdir(), 'cgroup-usage-'));
  writeFileSync(join(dir, 'cpuacct.usage'), '1500000000\n');
  writeFileSync(join(dir, 'memory.usage_in_bytes'), '10000000\n');
  writeFileSync(join(dir, 'memory.stat'), 'cache 5000\ninactive_file 100\ntotal_inactive_file 4000000\n');
  expect(cgroupV1Usage(dir, dir, 7)).toEqual({
    cpu: { timestamp: 7, usageCoreNanoSeconds: 1_500_000_000 },
    memory: { timestamp: 7, workingSetBytes: 6_000_000 },
  });
  expect(cgroupV1Usage(join(dir, 'absent'), dir)).toBeUndefined();
});
