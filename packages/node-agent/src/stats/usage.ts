/**
 * CPU and memory usage as the resource metrics endpoint reports it (model: the kubelet's `stats/` providers over
 * cAdvisor): cumulative CPU time in nanoseconds and the working set (memory in use minus inactive file pages) in
 * bytes. Three sources:
 * - the node, from `/proc/stat` (busy time of every CPU) and `/proc/meminfo`;
 * - a cgroup v1 pair of a container (`cpuacct.usage`, `memory.usage_in_bytes` less `memory.stat`'s
 *   `total_inactive_file`), where the builtin runtime placed it;
 * - a process tree, from `/proc/<pid>/stat` (user and system time, with that of reaped children) and
 *   `/proc/<pid>/status` (`VmRSS`), for a container without a cgroup. Resident pages shared by several processes
 *   of the tree are counted once per process, so the working set of a tree is an upper bound.
 * Every reader returns undefined where the files are absent or unreadable (not Linux, a process gone meanwhile).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One reading of CPU time and working set; either may be missing. */
export interface Usage {
  cpu?: { timestamp: number; usageCoreNanoSeconds: number };
  memory?: { timestamp: number; workingSetBytes: number };
}

/** USER_HZ, the unit of the CPU times in /proc: 100 on every Linux architecture Node.js runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
const NANOS_PER_TICK = 1e9 / CLOCK_TICKS_PER_SECOND;

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The `<key>: <n> kB` lines of /proc/meminfo or /proc/<pid>/status, in bytes. */
function kbField(text: string, key: string): number | undefined {
  const m = new RegExp(`^${key.replace(/[()]/g, '\\$&')}:\\s+(\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) * 1024 : undefined;
}

/**
 * The node's usage: the busy time of every CPU (user, nice, system, irq, softirq, steal; guest time is part of
 * user) and the memory in use less free and inactive file pages, as the root cgroup's working set counts it.
 */
export function nodeUsage(now = Date.now()): Usage {
  const out: Usage = {};
  const stat = readText('/proc/stat');
  const cpu = stat ? /^cpu\s+(.*)$/m.exec(stat)?.[1]?.trim().split(/\s+/).map(Number) : undefined;
  if (cpu && cpu.length >= 8) {
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
    out.cpu = { timestamp: now, usageCoreNanoSeconds: (user + nice + system + irq + softirq + steal) * NANOS_PER_TICK };
  }
  const meminfo = readText('/proc/meminfo');
  const total = meminfo ? kbField(meminfo, 'MemTotal') : undefined;
  if (meminfo && total !== undefined) {
    const used = total - (kbField(meminfo, 'MemFree') ?? 0) - (kbField(meminfo, 'Inactive(file)') ?? 0);
    out.memory = { timestamp: now, workingSetBytes: Math.max(0, used) };
  }
  return out;
}

/**
 * The usage of a cgroup v1 container from its `cpuacct` and `memory` directories; undefined unless both are
 * readable (a container that could not be placed in its cgroups is measured from its processes instead).
 */
export function cgroupV1Usage(cpuacctDir: string, memoryDir: string, now = Date.now()): Usage | undefined {
  const cpu = readText(join(cpuacctDir, 'cpuacct.usage'));
  const usage = readText(join(memoryDir, 'memory.usage_in_bytes'));
  const stat = readText(join(memoryDir, 'memory.stat'));
  if (cpu === undefined || usage === undefined || stat === undefined) return undefined;
  const inactive = Number(/^total_inactive_file (\d+)$/m.exec(stat)?.[1] ?? 0);
  return {
    cpu: { timestamp: now, usageCoreNanoSeconds: Number(cpu.trim()) },
    memory: { timestamp: now, workingSetBytes: Math.max(0, Number(usage.trim()) - inactive) },
  };
}

/** One process of a {@link ProcessTable}. */
interface ProcessEntry {
  ppid: number;
  /** utime + stime + cutime + cstime, in clock ticks. */
  ticks: number;
}

/** The processes of the machine at one moment, read once and shared by every container measured then. */
export interface ProcessTable {
  timestamp: number;
  processes: Map<number, ProcessEntry>;
  children: Map<number, number[]>;
}

/** Parses `/proc/<pid>/stat`; the command name may hold spaces and parentheses, so fields follow its last `)`. */
function parseStat(text: string): ProcessEntry | undefined {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // After the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17), numbered as in proc(5).
  const ppid = Number(fields[1]);
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
  return Number.isFinite(ppid) && Number.isFinite(ticks) ? { ppid, ticks } : undefined;
}

/** Reads every process's parent and CPU time from /proc. */
export function readProcessTable(now = Date.now()): ProcessTable {
  const processes = new Map<number, ProcessEntry>();
  const children = new Map<number, number[]>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    // not Linux
  }
  for (const p of pids) {
    const text = readText(`/proc/${p}/stat`);
    const e = text ? parseStat(text) : undefined;
    if (!e) continue; // exited meanwhile
    const pid = Number(p);
    processes.set(pid, e);
    const siblings = children.get(e.ppid);
    if (siblings) siblings.push(pid);
    else children.set(e.ppid, [pid]);
  }
  return { timestamp: now, processes, children };
}

/**
 * The usage of the process `pid` and its descendants: their CPU time (with that of their reaped children, so the
 * sum does not drop when a child exits) and their resident memory. Undefined when the process is not in the table.
 */
export function processTreeUsage(table: ProcessTable, pid: number): Usage | undefined {
  if (!table.processes.has(pid)) return undefined;
  let ticks = 0;
  let rss = 0;
  const queue = [pid];
  for (let i = 0; i < queue.length; i++) {
    const p = queue[i]!;
    ticks += table.processes.get(p)?.ticks ?? 0;
    const status = readText(`/proc/${p}/status`);
    rss += (status && kbField(status, 'VmRSS')) || 0;
    for (const c of table.children.get(p) ?? []) queue.push(c);
  }
  return {
    cpu: { timestamp: table.timestamp, usageCoreNanoSeconds: ticks * NANOS_PER_TICK },
    memory: { timestamp: table.timestamp, workingSetBytes: rss },
  };
}
