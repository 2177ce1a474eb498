/**
 * The audit configuration of a server (what `--audit-*` produces) and how it becomes an {@link Auditor}: each sink
 * (log, webhook) is wrapped in truncation and then in its mode (`batch` buffers in front of the truncation, so that
 * the batches it builds are what gets split by size), and the sinks are joined.
 */
import { type Logger } from '@platform/common';

import { Auditor, type AuditorOptions } from './auditor';
import {
  type AuditBackend,
  type AuditMode,
  type BatchConfig,
  modeBackend,
  truncatingBackend,
  type TruncateConfig,
  unionBackend,
} from './backend';
import {
  type LogFormat,
  logBackend,
  type LogOutput,
  RotatingFile,
  type RotationConfig,
  stdoutOutput,
} from './log-backend';
import { policyEvaluator } from './policy';
import { type Policy } from './types';
import { webhookBackend, type WebhookTarget } from './webhook-backend';

/** What every sink has. */
export interface AuditSinkConfig {
  mode: AuditMode;
  batch: BatchConfig;
  truncate: TruncateConfig;
  /** Serialization group/version of the events. */
  version: string;
}

/** `--audit-log-*`. */
export interface AuditLogConfig extends AuditSinkConfig {
  /** A file, or `-` for standard output. */
  path: string;
  format: LogFormat;
  rotation: RotationConfig;
}

/** `--audit-webhook-*`. */
export interface AuditWebhookConfig extends AuditSinkConfig {
  target: WebhookTarget;
  initialBackoffMs: number;
}

/** The audit configuration of a server. Without a policy nothing is recorded. */
export interface AuditConfig {
  policy?: Policy;
  log?: AuditLogConfig;
  webhook?: AuditWebhookConfig;
  /** More sinks, used as they are (tests, benchmarks). */
  backends?: AuditBackend[];
  /** Problems of the policy file that did not stop it (unknown fields), logged at start. */
  warnings?: string[];
}

/** Kubernetes' batch defaults of the log sink. */
export const DEFAULT_LOG_BATCH: BatchConfig = {
  bufferSize: 10000,
  maxBatchSize: 1,
  maxBatchWaitMs: 0,
  throttleEnable: false,
  throttleQPS: 0,
  throttleBurst: 0,
};

/** Kubernetes' batch defaults of the webhook sink. */
export const DEFAULT_WEBHOOK_BATCH: BatchConfig = {
  bufferSize: 10000,
  maxBatchSize: 400,
  maxBatchWaitMs: 30_000,
  throttleEnable: true,
  throttleQPS: 10,
  throttleBurst: 15,
};

/** Kubernetes' truncation defaults. */
export const DEFAULT_TRUNCATE: TruncateConfig = {
  enabled: false,
  maxBatchSize: 10 * 1024 * 1024,
  maxEventSize: 100 * 1024,
};

function wrap(name: string, sink: AuditBackend, c: AuditSinkConfig, log: Logger): AuditBackend {
  return modeBackend(name, truncatingBackend(name, sink, c.truncate, log), c.mode, c.batch, log);
}

/**
 * Builds the auditor, opening the log file. Resolves undefined when nothing would be recorded (no policy, or no
 * sink). Throws naming the option when the log file cannot be opened.
 */
export async function buildAuditor(c: AuditConfig, log: Logger, o: AuditorOptions = {}): Promise<Auditor | undefined> {
  const sinks: AuditBackend[] = [...(c.backends ?? [])];
  if (!c.policy) {
    if (c.log || c.webhook) log.warn('No audit policy file provided: no audit events will be recorded');
    return undefined;
  }
  const alog = log.child('audit');
  for (const w of c.warnings ?? []) alog.warn('Audit policy', { warning: w });
  if (c.log) {
    let out: LogOutput;
    if (c.log.path === '-') out = stdoutOutput();
    else {
      const file = new RotatingFile(c.log.path, c.log.rotation, alog);
      await file.open();
      out = file;
    }
    sinks.push(wrap('log', logBackend(out, c.log.format, c.log.version, alog), c.log, alog));
  }
  if (c.webhook) {
    const hook = webhookBackend(
      c.webhook.target,
      c.webhook.version,
      { initialBackoffMs: c.webhook.initialBackoffMs },
      alog,
    );
    sinks.push(wrap('webhook', hook, c.webhook, alog));
  }
  if (sinks.length === 0) return undefined;
  return new Auditor(policyEvaluator(c.policy), unionBackend(sinks), alog, o);
}
