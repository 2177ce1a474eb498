/**
 * A logger for tests of other packages: real formatting (klog text without headers by default), lines kept in
 * memory. `lines()` returns what was written so far.
 */
import { type LoggingConfig, defaultLoggingConfig } from '../config';
import { type Logger, KlogLogger, LoggerCore } from '../logger';

/** A capturing logger and its lines. */
export interface CapturedLogging {
  logger: Logger;
  /** Lines written so far, without trailing newlines, each prefixed by its severity letter and a space. */
  lines(): string[];
}

/** Builds a logger whose lines are kept in memory (`I "msg" key="v"`). `over` adjusts the config (e.g. verbosity). */
export function captureLogging(over: Partial<LoggingConfig> = {}): CapturedLogging {
  const out: string[] = [];
  const core = new LoggerCore({
    config: { ...defaultLoggingConfig(), skipHeaders: true, ...over },
    sink: (severity, line) => out.push(`${'IWEF'[severity]} ${line}`),
  });
  return { logger: new KlogLogger(core), lines: () => [...out] };
}
