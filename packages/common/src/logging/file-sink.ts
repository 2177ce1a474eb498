/**
 * The stream behind a winston `Stream` transport that writes klog-style log files: lines are buffered and flushed every `--log-flush-frequency`
 * (or when 256 KiB are pending), the file is rotated when it would exceed `--log-file-max-size` megabytes
 * (`x.log` → `x.log.1` … `x.log.5`, oldest dropped), and each new file starts with klog's header unless
 * `--skip-log-headers`.
 */
import { closeSync, existsSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';

import { Writable } from 'node:stream';

const MAX_PENDING = 256 * 1024;
const BACKUPS = 5;

/** Settings of one log file. */
export interface FileSinkOptions {
  path: string;
  /** Bytes; 0 means unlimited. */
  maxBytes: number;
  skipLogHeaders: boolean;
  now: () => number;
}

/** A buffered, rotating log file; each chunk written is one or more complete lines. */
export class FileSink extends Writable {
  private fd: number | undefined;
  private size = 0;
  private pending: string[] = [];
  private pendingBytes = 0;
  /** Epoch ms of the last completed flush (read by the `log` health check). */
  lastFlush: number;

  constructor(private readonly o: FileSinkOptions) {
    super({ decodeStrings: false });
    this.lastFlush = o.now();
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, next: (err?: Error | null) => void): void {
    const line = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    this.pending.push(line);
    this.pendingBytes += line.length;
    try {
      if (this.pendingBytes >= MAX_PENDING) this.flush();
      next();
    } catch (err) {
      next(err as Error);
    }
  }

  /** Writes pending lines to disk now (synchronously), rotating as needed. */
  flush(): void {
    if (this.pending.length > 0) {
      const data = this.pending.join('');
      this.pending = [];
      this.pendingBytes = 0;
      const bytes = Buffer.byteLength(data);
      if (this.fd === undefined) this.open();
      else if (this.o.maxBytes > 0 && this.size + bytes > this.o.maxBytes && this.size > 0) this.rotate();
      this.size += writeSync(this.fd!, data);
    }
    this.lastFlush = this.o.now();
  }

  private open(): void {
    const exists = existsSync(this.o.path);
    this.fd = openSync(this.o.path, 'a', 0o644);
    this.size = exists ? statSync(this.o.path).size : 0;
    if (this.size === 0 && !this.o.skipLogHeaders) this.size += writeSync(this.fd, fileHeader(this.o.now()));
  }

  private rotate(): void {
    closeSync(this.fd!);
    this.fd = undefined;
    for (let i = BACKUPS - 1; i >= 1; i--) {
      if (existsSync(`${this.o.path}.${i}`)) renameSync(`${this.o.path}.${i}`, `${this.o.path}.${i + 1}`);
    }
    renameSync(this.o.path, `${this.o.path}.1`);
    this.open();
  }

  override _final(done: (err?: Error | null) => void): void {
    try {
      this.closeFile();
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  /** Flushes and closes the file (a later write reopens it). */
  closeFile(): void {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

function fileHeader(epochMs: number): string {
  const d = new Date(epochMs);
  const p = (n: number): string => String(n).padStart(2, '0');
  return (
    `Log file created at: ${d.getFullYear()}/${p(d.getMonth() + 1)}/${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}\n` +
    `Running on machine: ${hostname()}\n` +
    `Binary: Built with node ${process.version} for ${process.platform}/${process.arch}\n` +
    `Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg\n`
  );
}
