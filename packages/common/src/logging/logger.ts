/**
 * The `Logger` components depend on (STYLE.md §8), and its klog-compatible implementation on winston.
 *
 * `log.info('Finished syncing', { key, durationMs })` — constant message, data in fields; `log.v(4).info(...)` for
 * verbose lines; `log.child('scheduler')` for a component (adds `logger="scheduler"`). Severities: `error` (needs
 * action), `warn` (degraded), `info` (lifecycle), `debug` (per object; same as `v(4).info`).
 *
 * Hot path: a disabled verbose line costs one comparison (plus a call-site lookup only when `--vmodule` is set);
 * an enabled line is formatted once into a string and handed to winston, whose transports only write it. The call
 * site (`file:line` in text headers) is captured from a one-frame V8 stack only when headers are on.
 */
import { basename, dirname } from 'node:path';

import { type LoggingConfig, type SeverityIndex } from './config';
import { type Fields, formatHeader, formatJsonLine, formatTextBody, formatTextFields } from './format';

/** Structured logging, what every component takes. Implementations never throw from a log call. */
export interface Logger {
  /** Something failed and needs action. Put the error in `fields.err`. */
  error(msg: string, fields?: Fields): void;
  /** Degraded but going on. */
  warn(msg: string, fields?: Fields): void;
  /** Lifecycle events (verbosity 0). */
  info(msg: string, fields?: Fields): void;
  /** Per-object detail: the same as `v(4).info`. */
  debug(msg: string, fields?: Fields): void;
  /** A logger that writes info lines only when the verbosity is at least `level`. */
  v(level: number): VerboseLogger;
  /** A logger for a component: `name` becomes `logger="<parent>/<name>"`, `fields` are added to every line. */
  child(name: string, fields?: Fields): Logger;
}

/** What `Logger.v(n)` returns. */
export interface VerboseLogger {
  /** Whether lines at this verbosity are written; test it before computing expensive fields. */
  readonly enabled: boolean;
  info(msg: string, fields?: Fields): void;
}

/** Where a formatted line goes: severity and the line without newline. */
export type LineSink = (severity: SeverityIndex, line: string) => void;

/** A call site. */
export interface CallSite {
  file: string;
  line: number;
}

/** Inputs of the logger core; all but config and sink have production defaults. */
export interface LoggerCoreOptions {
  config: LoggingConfig;
  sink: LineSink;
  /** Epoch milliseconds, fractional for microseconds. */
  now?: () => number;
  pid?: number;
  /** Overrides call-site capture (tests). `depth` counts frames above the public log method. */
  callSite?: () => CallSite;
}

const SENSITIVE_KEY = /pass(word|wd)?|token|secret|private.?key|authorization|bearer|credential|api.?key/i;
const REDACTED = '[REDACTED]';

function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

type StackPrep = (err: Error, frames: NodeJS.CallSite[]) => unknown;

/** Shared state of all loggers made from one configuration. */
export class LoggerCore {
  readonly config: LoggingConfig;
  private readonly sink: LineSink;
  readonly now: () => number;
  readonly pid: number;
  private readonly callSiteOverride: (() => CallSite) | undefined;
  private readonly needCaller: boolean;
  private readonly vmodule: { re: RegExp; withPath: boolean; level: number }[];
  private readonly vmoduleCache = new Map<string, number>();
  /** The highest level any vmodule entry enables: V(n) above both this and -v is off without a lookup. */
  private readonly vmoduleMax: number;

  constructor(o: LoggerCoreOptions) {
    this.config = o.config;
    this.sink = o.sink;
    this.now = o.now ?? (() => performance.timeOrigin + performance.now());
    this.pid = o.pid ?? process.pid;
    this.callSiteOverride = o.callSite;
    // The call site costs a V8 stack capture (~3-7 µs, more than the rest of the line): only text headers and
    // --log-backtrace-at need it. (Kubernetes' JSON lines carry a "caller" key; ours leave it out for that cost.)
    this.needCaller = (o.config.format === 'text' && !o.config.skipHeaders) || o.config.backtraceAt !== undefined;
    this.vmodule = o.config.vmodule.map((e) => ({
      re: globToRegExp(e.pattern),
      withPath: e.pattern.includes('/'),
      level: e.level,
    }));
    this.vmoduleMax = Math.max(0, ...o.config.vmodule.map((e) => e.level));
  }

  /** Captures the call site `depth` frames above this function's caller. */
  callSite(depth: number): CallSite {
    if (this.callSiteOverride) return this.callSiteOverride();
    const prevPrep = Error.prepareStackTrace;
    const prevLimit = Error.stackTraceLimit;
    const holder: { stack?: NodeJS.CallSite[] } = {};
    try {
      Error.stackTraceLimit = depth + 2;
      (Error as { prepareStackTrace?: StackPrep }).prepareStackTrace = (_e, frames) => frames;
      Error.captureStackTrace(holder);
      const frame = holder.stack?.[depth + 1];
      return { file: frame?.getFileName() ?? '???', line: frame?.getLineNumber() ?? 1 };
    } catch {
      return { file: '???', line: 1 };
    } finally {
      Error.prepareStackTrace = prevPrep;
      Error.stackTraceLimit = prevLimit;
    }
  }

  /** Whether V(level) is on at the call site `depth` frames up. */
  vEnabled(level: number, depth: number): boolean {
    if (level <= this.config.verbosity) return true;
    if (this.vmodule.length === 0 || level > this.vmoduleMax) return false;
    const site = this.callSite(depth + 1);
    const key = `${site.file}:${site.line}`;
    let v = this.vmoduleCache.get(key);
    if (v === undefined) {
      v = this.config.verbosity;
      const path = site.file.replace(/\.(js|ts|mjs|cjs)$/, '');
      const base = basename(path);
      for (const e of this.vmodule) {
        if (e.re.test(e.withPath ? path : base)) {
          v = e.level;
          break;
        }
      }
      this.vmoduleCache.set(key, v);
    }
    return level <= v;
  }

  /** Formats and writes one line; `depth` = frames between the user's call and this method. */
  write(
    severity: SeverityIndex,
    verbosity: number,
    msg: string,
    fields: Fields | undefined,
    ctx: LoggerContext,
    depth: number,
  ): void {
    try {
      const c = this.config;
      if (c.sanitization && fields) fields = sanitize(fields);
      const ts = this.now();
      let line: string;
      let site: CallSite | undefined;
      if (this.needCaller) site = this.callSite(depth + 1);
      if (c.format === 'json') {
        line = formatJsonLine(
          severity,
          verbosity,
          ts,
          msg,
          ctx.fields || fields ? { ...ctx.fields, ...fields } : undefined,
          site && `${basename(dirname(site.file))}/${basename(site.file)}:${site.line}`,
        );
      } else {
        const body = formatTextBody(msg, fields, ctx.textPrefix);
        if (c.skipHeaders) line = body;
        else {
          const file = c.addDirHeader
            ? `${basename(dirname(site!.file))}/${basename(site!.file)}`
            : basename(site!.file);
          line = formatHeader(severity, ts, this.pid, file, site!.line) + body;
        }
      }
      if (site && c.backtraceAt && basename(site.file) === c.backtraceAt.file && site.line === c.backtraceAt.line) {
        line += `\n${(new Error('backtrace').stack ?? '')
          .split('\n')
          .slice(depth + 2)
          .join('\n')}`;
      }
      this.sink(severity, line);
    } catch {
      // A log call never throws (e.g. a broken stream): logging must not take the component down.
    }
  }
}

function sanitize(fields: Fields): Fields {
  let out: Record<string, unknown> | undefined;
  for (const k in fields) {
    if (SENSITIVE_KEY.test(k)) {
      out ??= { ...fields };
      out[k] = REDACTED;
    }
  }
  return out ?? fields;
}

/** Per-child data: fields, and their pre-rendered text form. */
interface LoggerContext {
  fields: Fields | undefined;
  textPrefix: string;
}

/** The klog-style {@link Logger}. Build it with `createLogging`; tests may build it from a {@link LoggerCore}. */
export class KlogLogger implements Logger {
  private readonly ctx: LoggerContext;
  private readonly verbose = new Map<number, VerboseLogger>();

  constructor(
    private readonly core: LoggerCore,
    fields?: Fields,
  ) {
    this.ctx = { fields, textPrefix: fields ? ` ${formatTextFields(fields)}` : '' };
  }

  error(msg: string, fields?: Fields): void {
    this.core.write(2, 0, msg, fields, this.ctx, 1);
  }

  warn(msg: string, fields?: Fields): void {
    this.core.write(1, 0, msg, fields, this.ctx, 1);
  }

  info(msg: string, fields?: Fields): void {
    this.core.write(0, 0, msg, fields, this.ctx, 1);
  }

  debug(msg: string, fields?: Fields): void {
    if (this.core.vEnabled(4, 1)) this.core.write(0, 4, msg, fields, this.ctx, 1);
  }

  v(level: number): VerboseLogger {
    if (this.core.config.vmodule.length > 0 && level > this.core.config.verbosity) {
      // Per call site: decided where v() is called.
      const enabled = this.core.vEnabled(level, 1);
      return enabled ? this.makeVerbose(level) : DISABLED;
    }
    let vl = this.verbose.get(level);
    if (!vl) {
      vl = level <= this.core.config.verbosity ? this.makeVerbose(level) : DISABLED;
      this.verbose.set(level, vl);
    }
    return vl;
  }

  private makeVerbose(level: number): VerboseLogger {
    const core = this.core;
    const ctx = this.ctx;
    return {
      enabled: true,
      info(msg: string, fields?: Fields): void {
        core.write(0, level, msg, fields, ctx, 1);
      },
    };
  }

  child(name: string, fields?: Fields): Logger {
    const parent = this.ctx.fields?.logger;
    const logger = typeof parent === 'string' && parent !== '' ? `${parent}/${name}` : name;
    return new KlogLogger(this.core, { ...this.ctx.fields, logger, ...fields });
  }
}

const DISABLED: VerboseLogger = Object.freeze({ enabled: false, info(): void {} });

/** A logger that discards everything (for callers that must pass one and do not want output). */
export const NOP_LOGGER: Logger = Object.freeze({
  error(): void {},
  warn(): void {},
  info(): void {},
  debug(): void {},
  v(): VerboseLogger {
    return DISABLED;
  },
  child(): Logger {
    return NOP_LOGGER;
  },
});
