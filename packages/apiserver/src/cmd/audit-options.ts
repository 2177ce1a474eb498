/**
 * The audit options (`--audit-policy-file`, `--audit-log-*`, `--audit-webhook-*`; model: apiserver
 * `pkg/server/options/audit.go`) and the transport options of the API server (`--cors-allowed-origins`,
 * `--strict-transport-security-directives`, `--max-connection-bytes-per-sec`). Values are checked as Kubernetes
 * checks them, each problem naming its option; the policy and webhook configuration files are read when the
 * configuration is built (`applyTo`), and a bad file stops the start with a message naming it.
 */
import {
  type FlagDef,
  OptionGroupBase,
  boolFlag,
  durationFlag,
  floatFlag,
  intFlag,
  stringFlag,
  stringsFlag,
} from '@platform/common';

import { type AuditMode, AUDIT_MODES, type BatchConfig, type TruncateConfig } from '../audit/backend';
import { type AuditConfig, DEFAULT_LOG_BATCH, DEFAULT_TRUNCATE, DEFAULT_WEBHOOK_BATCH } from '../audit/config';
import { type LogFormat, LOG_FORMATS } from '../audit/log-backend';
import { loadPolicyFile } from '../audit/policy';
import { AUDIT_V1, AUDIT_VERSIONS } from '../audit/types';
import { loadWebhookConfig } from '../audit/webhook-backend';
import { compileOrigins } from '../filters/cors';
import { validateHstsDirectives } from '../filters/hsts';
import { type ApiServerConfig } from '../server/api-server';

/** What these families fill in. */
export type AuditFlagsConfig = Partial<Pick<ApiServerConfig, 'audit' | 'transport'>>;

/** The options one sink (log or webhook) shares with the other. */
class SinkOptions {
  mode: AuditMode;
  version = AUDIT_V1;
  batch: BatchConfig;
  truncate: TruncateConfig = { ...DEFAULT_TRUNCATE };

  constructor(
    private readonly plugin: 'log' | 'webhook',
    mode: AuditMode,
    batch: BatchConfig,
  ) {
    this.mode = mode;
    this.batch = { ...batch };
  }

  flagDefs(): FlagDef[] {
    const p = this.plugin;
    const b = this.batch;
    const t = this.truncate;
    return [
      stringFlag(
        `audit-${p}-mode`,
        `Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are ${AUDIT_MODES.join(',')}.`,
        this.mode,
        (v) => (this.mode = v as AuditMode),
        {
          validate: (v) => {
            if (!(AUDIT_MODES as readonly string[]).includes(v))
              throw new Error(`invalid audit ${p} mode ${v}, allowed modes are ${AUDIT_MODES.join(', ')}`);
          },
        },
      ),
      stringFlag(
        `audit-${p}-version`,
        `API group and version used for serializing audit events written to ${p}.`,
        this.version,
        (v) => (this.version = v),
        {
          validate: (v) => {
            if (!AUDIT_VERSIONS.includes(v))
              throw new Error(`invalid audit ${p} version ${v}, allowed versions are ${AUDIT_VERSIONS.join(', ')}`);
          },
        },
      ),
      intFlag(
        `audit-${p}-batch-buffer-size`,
        'The size of the buffer to store events before batching and writing. Only used in batch mode.',
        b.bufferSize,
        (v) => (b.bufferSize = v),
      ),
      intFlag(
        `audit-${p}-batch-max-size`,
        'The maximum size of a batch. Only used in batch mode.',
        b.maxBatchSize,
        (v) => (b.maxBatchSize = v),
      ),
      durationFlag(
        `audit-${p}-batch-max-wait`,
        "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.",
        b.maxBatchWaitMs === 0 ? undefined : b.maxBatchWaitMs,
        (v) => (b.maxBatchWaitMs = v),
      ),
      boolFlag(
        `audit-${p}-batch-throttle-enable`,
        'Whether batching throttling is enabled. Only used in batch mode.',
        b.throttleEnable,
        (v) => (b.throttleEnable = v),
      ),
      floatFlag(
        `audit-${p}-batch-throttle-qps`,
        'Maximum average number of batches per second. Only used in batch mode.',
        b.throttleQPS,
        (v) => (b.throttleQPS = v),
        b.throttleQPS === 0 ? { defaultText: '' } : {},
      ),
      intFlag(
        `audit-${p}-batch-throttle-burst`,
        'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.',
        b.throttleBurst === 0 ? undefined : b.throttleBurst,
        (v) => (b.throttleBurst = v),
      ),
      boolFlag(
        `audit-${p}-truncate-enabled`,
        'Whether event and batch truncating is enabled.',
        t.enabled,
        (v) => (t.enabled = v),
      ),
      intFlag(
        `audit-${p}-truncate-max-batch-size`,
        'Maximum size of the batch sent to the underlying backend. Actual serialized size can be several hundreds of bytes greater. If a batch exceeds this limit, it is split into several batches of smaller size.',
        t.maxBatchSize,
        (v) => (t.maxBatchSize = v),
      ),
      intFlag(
        `audit-${p}-truncate-max-event-size`,
        "Maximum size of the audit event sent to the underlying backend. If the size of an event is greater than this number, first request and response are removed, and if this doesn't reduce the size enough, event is discarded.",
        t.maxEventSize,
        (v) => (t.maxEventSize = v),
      ),
    ];
  }

  validate(): Error[] {
    const p = this.plugin;
    const errs: Error[] = [];
    if (this.mode === 'batch') {
      const b = this.batch;
      if (b.bufferSize <= 0)
        errs.push(
          new Error(
            `--audit-${p}-batch-buffer-size ${b.bufferSize}: invalid audit batch ${p} buffer size, must be a positive number`,
          ),
        );
      if (b.maxBatchSize <= 0)
        errs.push(
          new Error(
            `--audit-${p}-batch-max-size ${b.maxBatchSize}: invalid audit batch ${p} max batch size, must be a positive number`,
          ),
        );
      if (b.throttleEnable && !(b.throttleQPS > 0))
        errs.push(
          new Error(
            `--audit-${p}-batch-throttle-qps ${b.throttleQPS}: invalid audit batch ${p} throttle QPS, must be a positive number`,
          ),
        );
      if (b.throttleEnable && b.throttleBurst <= 0)
        errs.push(
          new Error(
            `--audit-${p}-batch-throttle-burst ${b.throttleBurst}: invalid audit batch ${p} throttle burst, must be a positive number`,
          ),
        );
    }
    const t = this.truncate;
    if (t.enabled) {
      if (t.maxEventSize <= 0)
        errs.push(
          new Error(
            `--audit-${p}-truncate-max-event-size ${t.maxEventSize}: invalid audit truncate ${p} max event size, must be a positive number`,
          ),
        );
      if (t.maxBatchSize < t.maxEventSize)
        errs.push(
          new Error(
            `--audit-${p}-truncate-max-batch-size ${t.maxBatchSize}: invalid audit truncate ${p} max batch size, must be greater than max event size (${t.maxEventSize})`,
          ),
        );
    }
    return errs;
  }

  config(): { mode: AuditMode; batch: BatchConfig; truncate: TruncateConfig; version: string } {
    return { mode: this.mode, batch: { ...this.batch }, truncate: { ...this.truncate }, version: this.version };
  }
}

/** `--audit-policy-file`, `--audit-log-*` and `--audit-webhook-*`. */
export class AuditOptions extends OptionGroupBase<AuditFlagsConfig> {
  policyFile = '';
  logPath = '';
  logFormat: LogFormat = 'json';
  logMaxAge = 0;
  logMaxBackups = 0;
  logMaxSize = 0;
  logCompress = false;
  webhookConfigFile = '';
  webhookInitialBackoffMs = 10_000;
  readonly log = new SinkOptions('log', 'blocking', DEFAULT_LOG_BATCH);
  readonly webhook = new SinkOptions('webhook', 'batch', DEFAULT_WEBHOOK_BATCH);

  constructor() {
    super('Auditing');
  }

  protected flagDefs(): FlagDef[] {
    const logSink = this.log.flagDefs();
    const webhookSink = this.webhook.flagDefs();
    return [
      stringFlag(
        'audit-policy-file',
        'Path to the file that defines the audit policy configuration.',
        this.policyFile,
        (v) => (this.policyFile = v),
      ),
      stringFlag(
        'audit-log-path',
        "If set, all requests coming to the apiserver will be logged to this file.  '-' means standard out.",
        this.logPath,
        (v) => (this.logPath = v),
      ),
      stringFlag(
        'audit-log-format',
        `Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates structured json format. Known formats are ${LOG_FORMATS.join(',')}.`,
        this.logFormat,
        (v) => (this.logFormat = v as LogFormat),
        {
          validate: (v) => {
            if (!(LOG_FORMATS as readonly string[]).includes(v))
              throw new Error(`invalid audit log format ${v}, allowed formats are ${LOG_FORMATS.join(', ')}`);
          },
        },
      ),
      intFlag(
        'audit-log-maxage',
        'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.',
        undefined,
        (v) => (this.logMaxAge = v),
      ),
      intFlag(
        'audit-log-maxbackup',
        'The maximum number of old audit log files to retain.',
        undefined,
        (v) => (this.logMaxBackups = v),
      ),
      intFlag(
        'audit-log-maxsize',
        'The maximum size in megabytes of the audit log file before it gets rotated.',
        undefined,
        (v) => (this.logMaxSize = v),
      ),
      boolFlag(
        'audit-log-compress',
        'If set, the rotated log files will be compressed using gzip.',
        this.logCompress,
        (v) => (this.logCompress = v),
      ),
      ...logSink,
      stringFlag(
        'audit-webhook-config-file',
        'Path to a kubeconfig formatted file that defines the audit webhook configuration.',
        this.webhookConfigFile,
        (v) => (this.webhookConfigFile = v),
      ),
      durationFlag(
        'audit-webhook-initial-backoff',
        'The amount of time to wait before retrying the first failed request.',
        this.webhookInitialBackoffMs,
        (v) => (this.webhookInitialBackoffMs = v),
      ),
      ...webhookSink,
    ];
  }

  protected override validateValues(): Error[] {
    const errs: Error[] = [];
    if (this.logPath !== '') {
      if (this.logMaxAge < 0) errs.push(new Error(`--audit-log-maxage ${this.logMaxAge} can't be a negative number`));
      if (this.logMaxBackups < 0)
        errs.push(new Error(`--audit-log-maxbackup ${this.logMaxBackups} can't be a negative number`));
      if (this.logMaxSize < 0)
        errs.push(new Error(`--audit-log-maxsize ${this.logMaxSize} can't be a negative number`));
      errs.push(...this.log.validate());
    }
    if (this.webhookConfigFile !== '') {
      if (this.webhookInitialBackoffMs <= 0)
        errs.push(new Error('--audit-webhook-initial-backoff must be a positive duration'));
      errs.push(...this.webhook.validate());
    }
    return errs;
  }

  protected override extraWarnings(): string[] {
    if (this.policyFile === '' && (this.logPath !== '' || this.webhookConfigFile !== ''))
      return ['No --audit-policy-file given: no audit events will be recorded'];
    return [];
  }

  /** Reads the policy and webhook configuration files; throws naming the option and the file. */
  applyTo(config: AuditFlagsConfig): void {
    const audit: AuditConfig = {};
    if (this.policyFile !== '') {
      const { policy, warnings } = loadPolicyFile(this.policyFile);
      audit.policy = policy;
      if (warnings.length > 0) audit.warnings = warnings;
    }
    if (this.logPath !== '') {
      audit.log = {
        ...this.log.config(),
        path: this.logPath,
        format: this.logFormat,
        rotation: {
          maxAgeDays: this.logMaxAge,
          maxBackups: this.logMaxBackups,
          maxSizeMB: this.logMaxSize,
          compress: this.logCompress,
        },
      };
    }
    if (this.webhookConfigFile !== '') {
      audit.webhook = {
        ...this.webhook.config(),
        target: loadWebhookConfig(this.webhookConfigFile),
        initialBackoffMs: this.webhookInitialBackoffMs,
      };
    }
    if (audit.policy || audit.log || audit.webhook) config.audit = audit;
  }
}

/** `--cors-allowed-origins`, `--strict-transport-security-directives`, `--max-connection-bytes-per-sec`. */
export class TransportOptions extends OptionGroupBase<AuditFlagsConfig> {
  corsAllowedOrigins: string[] = [];
  hstsDirectives: string[] = [];
  maxConnectionBytesPerSec = 0;

  constructor() {
    super('Transport');
  }

  protected flagDefs(): FlagDef[] {
    return [
      stringsFlag(
        'cors-allowed-origins',
        'List of allowed origins for CORS, comma separated. An allowed origin can be a regular expression to support subdomain matching. If this list is empty CORS will not be enabled.',
        this.corsAllowedOrigins,
        (v) => (this.corsAllowedOrigins = v),
      ),
      stringsFlag(
        'strict-transport-security-directives',
        "List of directives for HSTS, comma separated. If this list is empty, then HSTS directives will not be added. Example: 'max-age=31536000,includeSubDomains,preload'",
        this.hstsDirectives,
        (v) => (this.hstsDirectives = v),
      ),
      intFlag(
        'max-connection-bytes-per-sec',
        'If non-zero, throttle each user connection to this number of bytes/sec. Currently only applies to long-running requests.',
        this.maxConnectionBytesPerSec,
        (v) => (this.maxConnectionBytesPerSec = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const errs: Error[] = [...validateHstsDirectives(this.hstsDirectives)];
    try {
      compileOrigins(this.corsAllowedOrigins);
    } catch (err) {
      errs.push(err as Error);
    }
    if (this.maxConnectionBytesPerSec < 0)
      errs.push(new Error(`--max-connection-bytes-per-sec ${this.maxConnectionBytesPerSec} must not be negative`));
    return errs;
  }

  applyTo(config: AuditFlagsConfig): void {
    config.transport = {
      corsAllowedOrigins: [...this.corsAllowedOrigins],
      hstsDirectives: [...this.hstsDirectives],
      maxConnectionBytesPerSec: this.maxConnectionBytesPerSec,
    };
  }
}
