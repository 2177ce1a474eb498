/**
 * The log sink (`--audit-log-*`; model: apiserver `plugin/pkg/audit/log` over lumberjack): each event is one line,
 * JSON or the legacy text, written to standard output (`-`) or to a file that rotates by size.
 *
 * Rotation, as lumberjack does it: before a write that would take the file past `--audit-log-maxsize` megabytes
 * (100 when 0), the file is renamed `<name>-<UTC time as 2006-01-02T15-04-05.000><ext>` and a new one opened (mode
 * 0600). Then, in the background, backups beyond `--audit-log-maxbackup` (0 keeps all) and older than
 * `--audit-log-maxage` days by the time in their name (0 keeps all) are removed, and with `--audit-log-compress` the
 * others are gzipped (`.gz` appended). Writes are queued in order; writes that arrive while one is in progress are
 * joined into one.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

import { type Logger } from '@platform/common';

import { type AuditBackend } from './backend';
import { eventJsonParts, legacyLine } from './event';
import { type AuditEvent } from './types';

/** `--audit-log-format`. */
export type LogFormat = 'json' | 'legacy';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'legacy'];

/** Rotation of the log file. */
export interface RotationConfig {
  /** Megabytes before rotation; 0 means lumberjack's default, 100. */
  maxSizeMB: number;
  /** Backups kept; 0 keeps all. */
  maxBackups: number;
  /** Days a backup is kept, by the time in its name; 0 keeps all. */
  maxAgeDays: number;
  compress: boolean;
}

/** Where log lines go. */
export interface LogOutput {
  /** Appends text; rejects on a write failure. */
  write(text: string): Promise<void>;
  close(): Promise<void>;
}

/** Standard output. */
export function stdoutOutput(): LogOutput {
  return {
    write: (text) =>
      new Promise((resolve, reject) => process.stdout.write(text, (err) => (err ? reject(err) : resolve()))),
    close: async () => {},
  };
}

const MB = 1024 * 1024;

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/** The backup time stamp lumberjack puts in names: `2006-01-02T15-04-05.000`, UTC. */
export function backupTimestamp(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T` +
    `${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`
  );
}

function parseBackupTimestamp(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, sec, msec] = m.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, sec!, msec!);
}

/** A file that rotates by size. */
export class RotatingFile implements LogOutput {
  private fh: FileHandle | undefined;
  private size = 0;
  private pending: string[] = [];
  private waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private writing = false;
  private housekeeping: Promise<void> = Promise.resolve();
  private readonly maxBytes: number;
  private readonly prefix: string;
  private readonly ext: string;
  private readonly dir: string;

  constructor(
    readonly path: string,
    private readonly rotation: RotationConfig,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.maxBytes = (rotation.maxSizeMB > 0 ? rotation.maxSizeMB : 100) * MB;
    this.dir = dirname(path);
    this.ext = extname(path);
    this.prefix = basename(path, this.ext);
  }

  /** Opens (creating the directory and the file if needed). Throws naming the file. */
  async open(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o755 });
      this.fh = await open(this.path, 'a', 0o600);
      this.size = (await this.fh.stat()).size;
    } catch (err) {
      throw new Error(`--audit-log-path: cannot open ${this.path}: ${(err as Error).message}`);
    }
  }

  write(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push(text);
      this.waiters.push({ resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.pending.length > 0) {
      const texts = this.pending;
      const waiters = this.waiters;
      this.pending = [];
      this.waiters = [];
      // Texts that arrived together go out in one write, split where one would overflow the file (so that rotation
      // keeps its limit); each is encoded once. A text larger than a file fails alone.
      let chunk: Buffer[] = [];
      let chunkWaiters: typeof waiters = [];
      let bytes = 0;
      const flush = async (): Promise<void> => {
        const ws = chunkWaiters;
        try {
          await this.writeChunk(chunk, bytes);
          for (const w of ws) w.resolve();
        } catch (err) {
          for (const w of ws) w.reject(err);
        }
        chunk = [];
        chunkWaiters = [];
        bytes = 0;
      };
      for (let i = 0; i < texts.length; i++) {
        const buf = Buffer.from(texts[i]!);
        if (buf.length > this.maxBytes) {
          waiters[i]!.reject(new Error(`write length ${buf.length} exceeds maximum file size ${this.maxBytes}`));
          continue;
        }
        if (bytes > 0 && this.size + bytes + buf.length > this.maxBytes) await flush();
        chunk.push(buf);
        chunkWaiters.push(waiters[i]!);
        bytes += buf.length;
      }
      if (bytes > 0) await flush();
    }
    this.writing = false;
  }

  private async writeChunk(bufs: Buffer[], bytes: number): Promise<void> {
    if (!this.fh) await this.open();
    if (this.size + bytes > this.maxBytes) await this.rotate();
    if (bufs.length === 1) await this.fh!.write(bufs[0]!);
    else await this.fh!.writev(bufs);
    this.size += bytes;
  }

  private async rotate(): Promise<void> {
    await this.fh?.close();
    this.fh = undefined;
    const backup = join(this.dir, `${this.prefix}-${backupTimestamp(this.now())}${this.ext}`);
    await rename(this.path, backup);
    this.fh = await open(this.path, 'a', 0o600);
    this.size = 0;
    this.housekeeping = this.housekeeping.then(() =>
      this.cleanUp().catch((err: unknown) => this.log.error('Audit log rotation clean-up failed', { err })),
    );
  }

  /** The backups of this file, newest first. */
  async backups(): Promise<{ name: string; time: number; compressed: boolean }[]> {
    const out: { name: string; time: number; compressed: boolean }[] = [];
    for (const name of await readdir(this.dir)) {
      const compressed = name.endsWith('.gz');
      const plain = compressed ? name.slice(0, -3) : name;
      if (!plain.startsWith(`${this.prefix}-`) || !plain.endsWith(this.ext)) continue;
      const stamp = plain.slice(this.prefix.length + 1, plain.length - this.ext.length);
      const time = parseBackupTimestamp(stamp);
      if (time !== undefined) out.push({ name, time, compressed });
    }
    return out.sort((a, b) => b.time - a.time);
  }

  private async cleanUp(): Promise<void> {
    let files = await this.backups();
    const remove: string[] = [];
    if (this.rotation.maxBackups > 0 && files.length > this.rotation.maxBackups) {
      // A backup and its compressed copy (mid-compression) count once.
      const kept = new Set<string>();
      const keep: typeof files = [];
      for (const f of files) {
        const key = f.compressed ? f.name.slice(0, -3) : f.name;
        if (kept.has(key)) {
          keep.push(f);
          continue;
        }
        if (kept.size < this.rotation.maxBackups) {
          kept.add(key);
          keep.push(f);
        } else remove.push(f.name);
      }
      files = keep;
    }
    if (this.rotation.maxAgeDays > 0) {
      const cutoff = this.now() - this.rotation.maxAgeDays * 24 * 3600_000;
      files = files.filter((f) => {
        if (f.time >= cutoff) return true;
        remove.push(f.name);
        return false;
      });
    }
    for (const name of remove) await unlink(join(this.dir, name)).catch(() => {});
    if (this.rotation.compress) {
      for (const f of files.filter((f) => !f.compressed)) {
        const src = join(this.dir, f.name);
        const dst = `${src}.gz`;
        await pipeline(createReadStream(src), createGzip(), createWriteStream(dst, { mode: 0o600 }));
        await unlink(src);
      }
    }
  }

  /** Waits for queued writes and clean-up, then closes the file. */
  async close(): Promise<void> {
    while (this.writing || this.pending.length > 0) await new Promise((r) => setImmediate(r));
    await this.housekeeping;
    await this.fh?.close();
    this.fh = undefined;
  }

  /** The current size of the file in bytes (tests). */
  async currentSize(): Promise<number> {
    return (await stat(this.path)).size;
  }
}

/** The log sink over an output. */
export function logBackend(out: LogOutput, format: LogFormat, apiVersion: string, log: Logger): AuditBackend {
  const write = async (count: number, text: string): Promise<boolean> => {
    try {
      await out.write(text);
      return true;
    } catch (err) {
      log.error('Unable to write audit events to the log', { err, events: count });
      return false;
    }
  };
  // Batches of a file are lines one after the other: several go out in one write. Every piece of every line is
  // joined once (appending the pieces to a growing string builds a rope that the write then has to flatten).
  const writeBatches = (batches: AuditEvent[][]): Promise<boolean> => {
    const parts: string[] = [];
    let count = 0;
    for (const b of batches)
      for (const ev of b) {
        if (format === 'legacy') parts.push(legacyLine(ev));
        else eventJsonParts(ev, apiVersion, parts);
        parts.push('\n');
        count++;
      }
    return write(count, parts.join(''));
  };
  return {
    processEvents: (events) => writeBatches([events]),
    processBatches: writeBatches,
    shutdown: () => out.close(),
  };
}
