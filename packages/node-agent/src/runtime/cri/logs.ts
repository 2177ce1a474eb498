/**
 * Container log files in the CRI log format, as containerd (and the builtin runtime) write them:
 * one line per chunk, `<RFC3339Nano time> <stdout|stderr> <F|P> <text>`, where `P` marks a partial line that the
 * next entry of the same stream continues. This module reads them the way `/containerLogs` (`kubectl logs`) asks
 * (tail, since, timestamps, byte limit, follow) and rotates them by size (`--container-log-max-size`,
 * `--container-log-max-files`), as the kubelet's container log manager does: the current file is renamed to
 * `<file>.<timestamp>`, the runtime is asked to reopen it (CRI `ReopenContainerLog`), older rotated files are
 * gzipped and the oldest removed so that at most max-files files remain.
 */
import {
  createReadStream,
  createWriteStream,
  existsSync,
  promises as fsp,
  readdirSync,
  statSync,
  watch,
  type FSWatcher,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createGzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import type { Runtime } from '../runtime';

/** One parsed log entry. */
export interface CriLogEntry {
  /** The timestamp as written (RFC3339 with nanoseconds). */
  time: string;
  /** Milliseconds since the epoch. */
  timeMs: number;
  stream: 'stdout' | 'stderr';
  /** True for a `P` (partial) entry. */
  partial: boolean;
  /** The text, without the trailing newline. */
  content: string;
}

/** Parses one line of a CRI log file; undefined when it is not one. */
export function parseCriLogLine(line: string): CriLogEntry | undefined {
  const a = line.indexOf(' ');
  if (a <= 0) return undefined;
  const b = line.indexOf(' ', a + 1);
  if (b < 0) return undefined;
  const stream = line.slice(a + 1, b);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  const tag = line.slice(b + 1, b + 2);
  if (tag !== 'F' && tag !== 'P') return undefined;
  const time = line.slice(0, a);
  const timeMs = Date.parse(time);
  if (Number.isNaN(timeMs)) return undefined;
  return { time, timeMs, stream, partial: tag === 'P', content: line.slice(b + 3) };
}

/** Options of `readCriLog`, after `/containerLogs`' query (PodLogOptions). */
export interface ReadLogOptions {
  /** Only the last N lines (of whole lines; partial entries are joined first). */
  tailLines?: number;
  /** Only entries at or after this time, ms since the epoch. */
  sinceTimeMs?: number;
  /** Prefix each line with its RFC3339Nano timestamp. */
  timestamps?: boolean;
  /** Stop after this many bytes. */
  limitBytes?: number;
  /** Keep reading as the file grows (and across rotations) until `isDone` says so or `signal` aborts. */
  follow?: boolean;
  /** Polled while following: true once the container has exited (its last lines are then read and we return). */
  isDone?: () => boolean | Promise<boolean>;
  /** Only this stream. */
  stream?: 'stdout' | 'stderr';
  signal?: AbortSignal;
}

/** Where `readCriLog` writes: a function per chunk (return a promise for back-pressure). */
export type LogSink = (chunk: string) => void | Promise<void>;

class LineFormatter {
  // Partial entries waiting for the end of their line, per stream.
  private readonly pending = { stdout: '', stderr: '' };
  private pendingTime = { stdout: '', stderr: '' };

  constructor(private readonly o: ReadLogOptions) {}

  /** The whole output line for an entry, or undefined while it is partial or filtered out. */
  push(e: CriLogEntry): string | undefined {
    if (this.o.stream && e.stream !== this.o.stream) return undefined;
    if (this.o.sinceTimeMs !== undefined && e.timeMs < this.o.sinceTimeMs) return undefined;
    if (!this.pending[e.stream]) this.pendingTime[e.stream] = e.time;
    if (e.partial) {
      this.pending[e.stream] += e.content;
      return undefined;
    }
    const text = this.pending[e.stream] + e.content;
    const time = this.pendingTime[e.stream] || e.time;
    this.pending[e.stream] = '';
    this.pendingTime[e.stream] = '';
    return this.o.timestamps ? `${time} ${text}\n` : `${text}\n`;
  }
}

/**
 * Reads a CRI log file to `sink` as `kubectl logs` shows it. Resolves when the file is read (or, with `follow`,
 * when `isDone` turns true and the rest is read, or `signal` aborts). A missing file is an empty log.
 */
export async function readCriLog(path: string, sink: LogSink, o: ReadLogOptions = {}): Promise<void> {
  const fmt = new LineFormatter(o);
  let written = 0;
  let limited = false;
  const emit = async (s: string): Promise<void> => {
    if (o.limitBytes !== undefined) {
      const room = o.limitBytes - written;
      if (room <= 0) {
        limited = true;
        return;
      }
      if (Buffer.byteLength(s) > room) {
        s = Buffer.from(s).subarray(0, room).toString();
        limited = true;
      }
    }
    written += Buffer.byteLength(s);
    await sink(s);
  };

  let text: string;
  let ino = 0;
  let offset = 0;
  try {
    const st = statSync(path);
    ino = st.ino;
    const buf = await fsp.readFile(path);
    offset = buf.length;
    text = buf.toString('utf8');
  } catch {
    text = '';
  }
  let rest = '';
  const lastNl = text.lastIndexOf('\n');
  if (lastNl < text.length - 1) {
    rest = text.slice(lastNl + 1);
    text = text.slice(0, lastNl + 1);
  }
  const lines: string[] = [];
  for (const l of text.split('\n')) {
    if (!l) continue;
    const e = parseCriLogLine(l);
    if (!e) continue;
    const out = fmt.push(e);
    if (out !== undefined) lines.push(out);
  }
  const start = o.tailLines !== undefined ? Math.max(0, lines.length - o.tailLines) : 0;
  for (let i = start; i < lines.length && !limited; i++) await emit(lines[i]!);
  if (!o.follow || limited) return;

  // Follow: read what is appended; when the file is replaced (rotation), read the rest of the old one is done by
  // offset, then start the new file from its beginning.
  let watcher: FSWatcher | undefined;
  let wake: (() => void) | undefined;
  const nudge = (): void => wake?.();
  const startWatch = (): void => {
    try {
      watcher?.close();
      watcher = watch(dirname(path), { persistent: false }, nudge);
    } catch {
      watcher = undefined;
    }
  };
  startWatch();
  o.signal?.addEventListener('abort', nudge, { once: true });
  try {
    for (;;) {
      if (o.signal?.aborted || limited) return;
      const done = o.isDone ? await o.isDone() : false;
      let st: ReturnType<typeof statSync> | undefined;
      try {
        st = statSync(path);
      } catch {
        st = undefined;
      }
      if (st && st.ino !== ino) {
        // Rotated: the old file was renamed; what it still had past our offset is lost to us only if it was
        // written between our last read and the rename, as with the kubelet. Start the new file.
        ino = st.ino;
        offset = 0;
        rest = '';
      }
      if (st && st.size > offset) {
        const fh = await fsp.open(path, 'r');
        try {
          const len = st.size - offset;
          const buf = Buffer.alloc(len);
          const { bytesRead } = await fh.read(buf, 0, len, offset);
          offset += bytesRead;
          let chunk = rest + buf.subarray(0, bytesRead).toString('utf8');
          const nl = chunk.lastIndexOf('\n');
          rest = chunk.slice(nl + 1);
          chunk = chunk.slice(0, nl + 1);
          for (const l of chunk.split('\n')) {
            if (!l) continue;
            const e = parseCriLogLine(l);
            const out = e && fmt.push(e);
            if (out !== undefined) await emit(out);
            if (limited) return;
          }
        } finally {
          await fh.close();
        }
        continue;
      }
      if (done) return;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 250);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    watcher?.close();
    o.signal?.removeEventListener('abort', nudge);
  }
}

/** Rotated files of a log (`<log>.<timestamp>` and `<log>.<timestamp>.gz`), oldest first. */
export function rotatedLogs(logPath: string): string[] {
  const dir = dirname(logPath);
  const base = basename(logPath);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(`${base}.`) && !n.endsWith('.tmp'))
    .sort()
    .map((n) => join(dir, n));
}

function rotationStamp(now: Date): string {
  // 20060102-150405 as the kubelet names them, with milliseconds so two rotations in one second differ.
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return (
    `${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-` +
    `${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}.${p(now.getUTCMilliseconds(), 3)}`
  );
}

async function gzipFile(path: string): Promise<void> {
  const tmp = `${path}.gz.tmp`;
  await pipeline(createReadStream(path), createGzip(), createWriteStream(tmp));
  await fsp.rename(tmp, `${path}.gz`);
  await fsp.rm(path, { force: true });
}

/** Options of `ContainerLogRotator`. */
export interface LogRotationOptions {
  /** `--container-log-max-size` in bytes (10 MiB by default). */
  maxSizeBytes: number;
  /** `--container-log-max-files` (5 by default, at least 2): the current file and max-files − 1 rotated ones. */
  maxFiles: number;
}

/**
 * Rotates the logs of a runtime's running containers by size. Call `rotateAll()` periodically (the kubelet checks
 * every 10 s); each container whose log is larger than max-size is rotated.
 */
export class ContainerLogRotator {
  /** The log path of each running container: a container's never changes (one status call each, not each pass). */
  private readonly logPaths = new Map<string, string>();

  constructor(
    private readonly runtime: Runtime,
    private readonly o: LogRotationOptions,
  ) {
    if (o.maxFiles < 2) throw new Error('--container-log-max-files must be at least 2');
  }

  /** One pass over the running containers; returns the ids of the containers whose logs were rotated. */
  async rotateAll(): Promise<string[]> {
    const rotated: string[] = [];
    const containers = await this.runtime.listContainers({ state: 'CONTAINER_RUNNING' });
    const running = new Set(containers.map((c) => c.id));
    for (const id of this.logPaths.keys()) if (!running.has(id)) this.logPaths.delete(id);
    for (const c of containers) {
      try {
        let logPath = this.logPaths.get(c.id);
        if (logPath === undefined) {
          logPath = (await this.runtime.containerStatus(c.id)).logPath ?? '';
          this.logPaths.set(c.id, logPath);
        }
        if (!logPath) continue;
        if (await this.rotateIfNeeded(c.id, logPath)) rotated.push(c.id);
      } catch {
        // gone meanwhile, or the runtime failed: next pass
      }
    }
    return rotated;
  }

  /** Rotates one container's log when it is over the size; true when it did. */
  async rotateIfNeeded(containerId: string, logPath: string): Promise<boolean> {
    let size: number;
    try {
      size = statSync(logPath).size;
    } catch {
      return false;
    }
    // Keep the bounds even when the file is small (a previous pass may have been cut short).
    await this.trim(logPath, size > this.o.maxSizeBytes ? 1 : 0);
    if (size <= this.o.maxSizeBytes) return false;
    const target = `${logPath}.${rotationStamp(new Date())}`;
    await fsp.rename(logPath, target);
    try {
      if (!this.runtime.reopenContainerLog) throw new Error('the runtime cannot reopen container logs');
      await this.runtime.reopenContainerLog(containerId);
    } catch (err) {
      // The runtime still writes to the renamed file: give it its name back.
      if (!existsSync(logPath)) await fsp.rename(target, logPath).catch(() => undefined);
      throw err;
    }
    return true;
  }

  /** Removes the oldest rotated files so that `room` more fit in max-files, and gzips all but the newest. */
  private async trim(logPath: string, room: number): Promise<void> {
    let rotated = rotatedLogs(logPath);
    const keep = Math.max(0, this.o.maxFiles - 1 - room);
    while (rotated.length > keep) {
      await fsp.rm(rotated.shift()!, { force: true });
    }
    rotated = rotatedLogs(logPath);
    for (const f of rotated.slice(0, -1)) if (!f.endsWith('.gz')) await gzipFile(f);
  }
}
