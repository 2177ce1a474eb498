/**
 * The logging configuration built from the logging flags (Document 2, "Options common to API server, controller
 * manager and scheduler"), as klog understands them.
 */

/** klog severities, in increasing order; numbers are what `--stderrthreshold` takes. */
export const SEVERITIES = ['INFO', 'WARNING', 'ERROR', 'FATAL'] as const;
/** A severity index: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL. */
export type SeverityIndex = 0 | 1 | 2 | 3;

/** One `--vmodule` entry: files whose name (without extension) matches the glob log at `level`. */
export interface VModuleEntry {
  pattern: string;
  level: number;
}

/** `file:line` of `--log-backtrace-at`. */
export interface TraceLocation {
  file: string;
  line: number;
}

/** Every logging setting. Produced by `LoggingOptions.applyTo` or {@link defaultLoggingConfig}. */
export interface LoggingConfig {
  format: 'text' | 'json';
  /** `-v`: Info lines with V(n) for n ≤ verbosity are written. */
  verbosity: number;
  vmodule: VModuleEntry[];
  addDirHeader: boolean;
  alsoLogToStderr: boolean;
  logToStderr: boolean;
  oneOutput: boolean;
  skipHeaders: boolean;
  skipLogHeaders: boolean;
  stderrThreshold: SeverityIndex;
  backtraceAt?: TraceLocation;
  logDir: string;
  logFile: string;
  /** Megabytes; 0 means unlimited. */
  logFileMaxSizeMB: number;
  flushFrequencyMs: number;
  sanitization: boolean;
}

/** The defaults of the flags. */
export function defaultLoggingConfig(): LoggingConfig {
  return {
    format: 'text',
    verbosity: 0,
    vmodule: [],
    addDirHeader: false,
    alsoLogToStderr: false,
    logToStderr: true,
    oneOutput: false,
    skipHeaders: false,
    skipLogHeaders: false,
    stderrThreshold: 2,
    logDir: '',
    logFile: '',
    logFileMaxSizeMB: 1800,
    flushFrequencyMs: 5000,
    sanitization: false,
  };
}
