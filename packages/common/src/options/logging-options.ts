/**
 * The logging option family (Document 2): klog's flags plus `--logging-format` and
 * `--experimental-logging-sanitization`. With `--logging-format=json` the klog-only flags are ignored, and the
 * warnings name the ones that were set.
 */
import {
  type LoggingConfig,
  type SeverityIndex,
  type VModuleEntry,
  defaultLoggingConfig,
  SEVERITIES,
} from '../logging/config';

import { type FlagDef, OptionGroupBase, boolFlag, durationFlag, intFlag, stringFlag } from './flags';
import { FlagValueError, UINT, parseInteger } from './parsers';

/** Flags that the JSON format ignores, in the order Document 2 lists them. */
export const FLAGS_IGNORED_BY_JSON = [
  'add-dir-header',
  'alsologtostderr',
  'log-backtrace-at',
  'log-dir',
  'log-file',
  'log-file-max-size',
  'logtostderr',
  'one-output',
  'skip-headers',
  'skip-log-headers',
  'stderrthreshold',
  'vmodule',
  'log-flush-frequency',
] as const;

/** Parses `--vmodule` (`pattern=N,...`); throws naming the bad entry. */
export function parseVModule(text: string): VModuleEntry[] {
  const out: VModuleEntry[] = [];
  for (const raw of text.split(',')) {
    if (raw.trim() === '') continue;
    const eq = raw.lastIndexOf('=');
    const pattern = eq < 0 ? '' : raw.slice(0, eq).trim();
    const level = eq < 0 ? '' : raw.slice(eq + 1).trim();
    if (pattern === '' || !/^[0-9]+$/.test(level)) {
      throw new FlagValueError(`syntax error: expect comma-separated list of filename=N, got ${JSON.stringify(raw)}`);
    }
    out.push({ pattern, level: Number(level) });
  }
  return out;
}

/** Parses `--stderrthreshold`: a severity name (`INFO`, `WARNING`, `ERROR`, `FATAL`) or its number 0–3. */
export function parseSeverity(text: string): SeverityIndex {
  const byName = SEVERITIES.indexOf(text.toUpperCase() as (typeof SEVERITIES)[number]);
  if (byName >= 0) return byName as SeverityIndex;
  if (/^[0-3]$/.test(text)) return Number(text) as SeverityIndex;
  throw new FlagValueError(`unknown severity ${JSON.stringify(text)}: want INFO, WARNING, ERROR, FATAL or 0-3`);
}

/** The logging option family. Holder of the values; `applyTo` produces the logging config. */
export class LoggingOptions extends OptionGroupBase<{ logging?: LoggingConfig }> {
  readonly config: LoggingConfig = defaultLoggingConfig();
  private backtraceText = ':0';

  /** @param formatDeprecated the node agent marks `--logging-format` deprecated (Document 3). */
  constructor(private readonly formatDeprecated?: string) {
    super('Logging');
  }

  protected flagDefs(): FlagDef[] {
    const c = this.config;
    return [
      boolFlag(
        'add-dir-header',
        'If true, adds the file directory to the header of the log messages',
        c.addDirHeader,
        (v) => (c.addDirHeader = v),
      ),
      boolFlag(
        'alsologtostderr',
        'log to standard error as well as files',
        c.alsoLogToStderr,
        (v) => (c.alsoLogToStderr = v),
      ),
      stringFlag(
        'log-backtrace-at',
        'when logging hits line file:N, emit a stack trace',
        '',
        (v) => {
          this.backtraceText = v;
          if (v === ':0' || v === '') delete c.backtraceAt;
          else c.backtraceAt = parseTraceLocation(v);
        },
        {
          type: 'traceLocation',
          defaultText: ':0',
          validate: (v) => void (v === ':0' || v === '' || parseTraceLocation(v)),
        },
      ),
      stringFlag('log-dir', 'If non-empty, write log files in this directory', c.logDir, (v) => (c.logDir = v)),
      stringFlag('log-file', 'If non-empty, use this log file', c.logFile, (v) => (c.logFile = v)),
      intFlag(
        'log-file-max-size',
        'Defines the maximum size a log file can grow to. Unit is megabytes. If the value is 0, the maximum file size is unlimited.',
        c.logFileMaxSizeMB,
        (v) => (c.logFileMaxSizeMB = v),
        { type: 'uint', range: UINT },
      ),
      durationFlag(
        'log-flush-frequency',
        'Maximum number of seconds between log flushes',
        c.flushFrequencyMs,
        (v) => (c.flushFrequencyMs = v),
      ),
      stringFlag(
        'logging-format',
        `Sets the log format. Permitted formats: "json", "text". Non-default formats don't honor these flags: ${FLAGS_IGNORED_BY_JSON.map((f) => `--${f}`).join(', ')}. Non-default choices are currently alpha and subject to change without warning.`,
        c.format,
        (v) => (c.format = v as 'text' | 'json'),
        {
          validate: (v) => {
            if (v !== 'text' && v !== 'json') {
              throw new FlagValueError(`unsupported logging format ${JSON.stringify(v)}: want "json" or "text"`);
            }
          },
          ...(this.formatDeprecated !== undefined ? { deprecated: this.formatDeprecated } : {}),
        },
      ),
      boolFlag('logtostderr', 'log to standard error instead of files', c.logToStderr, (v) => (c.logToStderr = v)),
      boolFlag(
        'one-output',
        'If true, only write logs to their native severity level (vs also writing to each lower severity level)',
        c.oneOutput,
        (v) => (c.oneOutput = v),
      ),
      boolFlag(
        'skip-headers',
        'If true, avoid header prefixes in the log messages',
        c.skipHeaders,
        (v) => (c.skipHeaders = v),
      ),
      boolFlag(
        'skip-log-headers',
        'If true, avoid headers when opening log files',
        c.skipLogHeaders,
        (v) => (c.skipLogHeaders = v),
      ),
      stringFlag(
        'stderrthreshold',
        'logs at or above this threshold go to stderr',
        '',
        (v) => (c.stderrThreshold = parseSeverity(v)),
        {
          type: 'severity',
          defaultText: '2',
          validate: (v) => void parseSeverity(v),
        },
      ),
      intFlag('v', 'number for the log level verbosity', c.verbosity, (v) => (c.verbosity = v), {
        short: 'v',
        type: 'Level',
        range: { min: 0, max: 2147483647 },
      }),
      stringFlag(
        'vmodule',
        'comma-separated list of pattern=N settings for file-filtered logging',
        '',
        (v) => (c.vmodule = [...c.vmodule, ...parseVModule(v)]),
        {
          type: 'moduleSpec',
          validate: (v) => void parseVModule(v),
        },
      ),
      boolFlag(
        'experimental-logging-sanitization',
        '[Experimental] When enabled prevents logging of fields tagged as sensitive (passwords, keys, tokens). Runtime log sanitization may introduce significant computation overhead and therefore should not be enabled in production.',
        c.sanitization,
        (v) => (c.sanitization = v),
      ),
    ];
  }

  /** With the JSON format: one warning naming every set flag that the format ignores. */
  protected override extraWarnings(): string[] {
    if (this.config.format !== 'json') {
      // klog: with --logtostderr (the default) no file is written; a common surprise, so say it.
      const files = (['log-file', 'log-dir'] as const).filter((f) => this.isSet(f));
      if (this.config.logToStderr && files.length > 0) {
        return [
          `${files.map((f) => `--${f}`).join(' and ')} have no effect while --logtostderr is true (the default): add --logtostderr=false`,
        ];
      }
      return [];
    }
    const ignored = FLAGS_IGNORED_BY_JSON.filter((f) => this.isSet(f));
    if (ignored.length === 0) return [];
    return [
      `--logging-format=json ignores ${ignored.map((f) => `--${f}`).join(', ')}: these flags only apply to the text format`,
    ];
  }

  /** The `--log-backtrace-at` text as given (`:0` when unset). */
  get backtraceAt(): string {
    return this.backtraceText;
  }

  /** Stores a copy of the config; with JSON, the klog-only settings are reset to their defaults. */
  applyTo(config: { logging?: LoggingConfig }): void {
    const c: LoggingConfig = { ...this.config, vmodule: [...this.config.vmodule] };
    if (c.format === 'json') {
      const d = defaultLoggingConfig();
      Object.assign(c, {
        addDirHeader: d.addDirHeader,
        alsoLogToStderr: d.alsoLogToStderr,
        logDir: d.logDir,
        logFile: d.logFile,
        logFileMaxSizeMB: d.logFileMaxSizeMB,
        logToStderr: true,
        oneOutput: d.oneOutput,
        skipHeaders: d.skipHeaders,
        skipLogHeaders: d.skipLogHeaders,
        stderrThreshold: d.stderrThreshold,
        vmodule: [],
        flushFrequencyMs: d.flushFrequencyMs,
      });
      delete c.backtraceAt;
    }
    config.logging = c;
  }
}

function parseTraceLocation(v: string): { file: string; line: number } {
  const colon = v.lastIndexOf(':');
  const file = colon < 0 ? '' : v.slice(0, colon);
  const lineText = colon < 0 ? '' : v.slice(colon + 1);
  if (file === '' || file.includes('/') || !/^[0-9]+$/.test(lineText)) {
    throw new FlagValueError(`syntax error: expect file.ext:N, got ${JSON.stringify(v)}`);
  }
  return { file, line: parseInteger(lineText, { min: 0 }) };
}
