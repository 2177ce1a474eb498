/**
 * Wires a {@link LoggingConfig} to winston: standard error and/or klog-style files, with klog's routing rules:
 * - `--logtostderr` (default): every line to standard error, no files;
 * - otherwise files: `--log-file` gets every line; else `--log-dir` (default: the temporary directory, as klog)
 *   gets one file per severity
 *   (`<program>.<host>.<user>.log.<SEVERITY>.<yyyymmdd-hhmmss>.<pid>`, with a `<program>.<SEVERITY>` symlink), each
 *   holding its severity and the ones above it, or only its own with `--one-output`;
 *   lines at or above `--stderrthreshold` also go to standard error, and all of them with `--alsologtostderr`.
 * Files are flushed every `--log-flush-frequency` and on `flush()`/`close()`.
 */
import { mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { type Writable } from 'node:stream';

import winston from 'winston';

import { type LoggingConfig, type SeverityIndex, SEVERITIES } from './config';
import { FileSink } from './file-sink';
import { type CallSite, type Logger, KlogLogger, LoggerCore } from './logger';

const MESSAGE = Symbol.for('message');
const LEVEL_OF: readonly string[] = ['info', 'warn', 'error', 'error'];

// winston exports the transport base class as `Transport` at runtime (winston-transport's TransportStream); its
// typings only declare it through a namespace import, which TypeScript will not extend.
const TransportBase = (winston as unknown as { Transport: unknown }).Transport as new (
  opts?: object,
) => winston.transport;

/**
 * A winston transport writing preformatted lines to a stream. (winston's own Stream transport schedules a
 * setImmediate per line to emit 'logged', which costs more than formatting the line.)
 */
export class LineStreamTransport extends TransportBase {
  constructor(private readonly stream: Writable) {
    super();
  }

  override log(info: Record<string | symbol, unknown>, next: () => void): void {
    this.stream.write(`${info[MESSAGE] as string}\n`);
    next();
  }
}

/** Inputs of {@link createLogging}; tests inject the clock, pid, streams and call site. */
export interface CreateLoggingOptions {
  config: LoggingConfig;
  /** Program name for `--log-dir` file names (`platform-apiserver`). */
  program?: string;
  stderr?: Writable;
  now?: () => number;
  pid?: number;
  callSite?: () => CallSite;
}

/** A running logging setup. */
export interface Logging {
  /** The root logger. */
  readonly logger: Logger;
  /** Writes buffered file lines now. */
  flush(): void;
  /** Epoch ms of the last file flush (now, when logging to standard error only). */
  lastFlush(): number;
  /** Flushes, closes the files and stops the flush timer. */
  close(): Promise<void>;
}

/** Builds loggers for `o.config`. Throws when a log directory or file cannot be created. */
export function createLogging(o: CreateLoggingOptions): Logging {
  const c = o.config;
  const now = o.now ?? (() => performance.timeOrigin + performance.now());
  const pid = o.pid ?? process.pid;
  const stderr = o.stderr ?? process.stderr;
  // Routes: a winston transport and which severities it takes. The root winston Logger's object-mode stream pipeline
  // costs ~5 µs a line (measured), so lines go straight to the transports' log(), which only write them.
  const routes: { accept: (s: SeverityIndex) => boolean; transport: winston.transport }[] = [];
  const files: FileSink[] = [];

  // As klog: without --logtostderr, lines go to files — --log-file, else --log-dir, else the temporary directory.
  const toFiles = !c.logToStderr;
  const logDir = c.logDir !== '' ? c.logDir : tmpdir();
  // Standard error: everything when logging there, else the threshold (or everything with alsologtostderr).
  const stderrMin = c.logToStderr || !toFiles || c.alsoLogToStderr ? 0 : c.stderrThreshold;
  if (stderrMin <= 2) {
    routes.push({
      accept: (s) => s >= stderrMin,
      transport: new winston.transports.Stream({ stream: stderr, eol: '\n' }),
    });
  }
  if (toFiles) {
    const common = { maxBytes: c.logFileMaxSizeMB * 1024 * 1024, skipLogHeaders: c.skipLogHeaders, now };
    if (c.logFile !== '') {
      const sink = new FileSink({ ...common, path: c.logFile });
      files.push(sink);
      routes.push({ accept: () => true, transport: new winston.transports.Stream({ stream: sink, eol: '\n' }) });
    } else {
      mkdirSync(logDir, { recursive: true });
      const program = o.program ?? 'platform';
      const d = new Date(now());
      const p = (n: number): string => String(n).padStart(2, '0');
      const stamp = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
      let user = 'unknownuser';
      try {
        user = userInfo().username;
      } catch {
        // no passwd entry (containers)
      }
      for (let sev = 0 as SeverityIndex; sev <= 2; sev++) {
        const name = `${program}.${hostname()}.${user}.log.${SEVERITIES[sev]}.${stamp}.${pid}`;
        const sink = new FileSink({ ...common, path: join(logDir, name) });
        files.push(sink);
        const level = sev;
        routes.push({
          accept: (s) => (c.oneOutput ? s === level : s >= level),
          transport: new winston.transports.Stream({ stream: sink, eol: '\n' }),
        });
        const link = join(logDir, `${program}.${SEVERITIES[sev]}`);
        try {
          unlinkSync(link);
        } catch {
          // not there yet
        }
        try {
          symlinkSync(name, link);
        } catch {
          // best effort, as klog
        }
      }
    }
  }

  const noop = (): void => {};
  const core = new LoggerCore({
    config: c,
    now,
    pid,
    ...(o.callSite ? { callSite: o.callSite } : {}),
    sink: (severity, line) => {
      const info = { level: LEVEL_OF[severity]!, message: line, [MESSAGE]: line };
      for (const r of routes) if (r.accept(severity)) r.transport.log!(info, noop);
    },
  });

  let last = now();
  const flush = (): void => {
    for (const f of files) f.flush();
    last = now();
  };
  const timer = files.length > 0 && c.flushFrequencyMs > 0 ? setInterval(flush, c.flushFrequencyMs) : undefined;
  timer?.unref();
  const onExit = (): void => flush();
  if (files.length > 0) process.on('exit', onExit);

  return {
    logger: new KlogLogger(core),
    flush,
    lastFlush: () => (files.length > 0 ? last : now()),
    close: async () => {
      if (timer) clearInterval(timer);
      process.off('exit', onExit);
      flush();
      for (const f of files) f.closeFile();
      for (const r of routes) r.transport.close?.();
    },
  };
}
