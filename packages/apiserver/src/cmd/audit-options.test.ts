import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type OptionGroup, parseCommandLine } from '@platform/common';
import { Command } from 'commander';

import { type AuditFlagsConfig, AuditOptions, TransportOptions } from './audit-options';

function parse(argv: string[]) {
  const audit = new AuditOptions();
  const transport = new TransportOptions();
  const groups = [audit, transport] as OptionGroup<never>[];
  const cmd = new Command('test');
  for (const g of groups) g.addFlags(cmd);
  const r = parseCommandLine(cmd, groups, argv, () => {});
  return { audit, transport, messages: r.errors.map((e) => e.message), warnings: r.warnings };
}

describe('audit and transport options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'audit-opts-'));
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, 'apiVersion: audit.platform/v1\nkind: Policy\nrules: [{ level: Metadata }]\n');
  const hook = join(dir, 'hook.kubeconfig');
  writeFileSync(hook, 'clusters: [{ name: a, cluster: { server: "https://127.0.0.1:9443" } }]\n');

  it("has Kubernetes' defaults", () => {
    const { audit, transport, messages } = parse([]);
    expect(messages).toEqual([]);
    expect(audit.log.mode).toBe('blocking');
    expect(audit.log.batch).toMatchObject({ bufferSize: 10000, maxBatchSize: 1, throttleEnable: false });
    expect(audit.webhook.mode).toBe('batch');
    expect(audit.webhook.batch).toEqual({
      bufferSize: 10000,
      maxBatchSize: 400,
      maxBatchWaitMs: 30_000,
      throttleEnable: true,
      throttleQPS: 10,
      throttleBurst: 15,
    });
    expect(audit.webhookInitialBackoffMs).toBe(10_000);
    expect(audit.log.truncate).toEqual({ enabled: false, maxBatchSize: 10485760, maxEventSize: 102400 });
    const config: AuditFlagsConfig = {};
    audit.applyTo(config);
    transport.applyTo(config);
    expect(config.audit).toBeUndefined();
    expect(config.transport).toEqual({ corsAllowedOrigins: [], hstsDirectives: [], maxConnectionBytesPerSec: 0 });
  });

  it('parses every flag into the configuration', () => {
    const { audit, transport, messages } = parse([
      `--audit-policy-file=${policy}`,
      `--audit-log-path=${join(dir, 'audit.log')}`,
      '--audit-log-format=legacy',
      '--audit-log-maxage=7',
      '--audit-log-maxbackup=3',
      '--audit-log-maxsize=50',
      '--audit-log-compress',
      '--audit-log-mode=batch',
      '--audit-log-batch-buffer-size=100',
      '--audit-log-batch-max-size=10',
      '--audit-log-batch-max-wait=2s',
      '--audit-log-batch-throttle-enable',
      '--audit-log-batch-throttle-qps=5.5',
      '--audit-log-batch-throttle-burst=7',
      '--audit-log-truncate-enabled',
      '--audit-log-truncate-max-batch-size=2000',
      '--audit-log-truncate-max-event-size=1000',
      '--audit-log-version=audit.platform/v1beta1',
      `--audit-webhook-config-file=${hook}`,
      '--audit-webhook-mode=blocking-strict',
      '--audit-webhook-initial-backoff=1s',
      '--cors-allowed-origins=https://a\\.example$,//localhost(:|$)',
      '--strict-transport-security-directives=max-age=31536000,includeSubDomains,preload',
      '--max-connection-bytes-per-sec=4096',
    ]);
    expect(messages).toEqual([]);
    const config: AuditFlagsConfig = {};
    audit.applyTo(config);
    transport.applyTo(config);
    expect(config.audit?.policy?.rules).toEqual([{ level: 'Metadata' }]);
    expect(config.audit?.log).toEqual({
      path: join(dir, 'audit.log'),
      format: 'legacy',
      rotation: { maxAgeDays: 7, maxBackups: 3, maxSizeMB: 50, compress: true },
      mode: 'batch',
      batch: {
        bufferSize: 100,
        maxBatchSize: 10,
        maxBatchWaitMs: 2000,
        throttleEnable: true,
        throttleQPS: 5.5,
        throttleBurst: 7,
      },
      truncate: { enabled: true, maxBatchSize: 2000, maxEventSize: 1000 },
      version: 'audit.platform/v1beta1',
    });
    expect(config.audit?.webhook).toMatchObject({
      mode: 'blocking-strict',
      initialBackoffMs: 1000,
      target: { server: 'https://127.0.0.1:9443' },
    });
    expect(config.transport).toEqual({
      corsAllowedOrigins: ['https://a\\.example$', '//localhost(:|$)'],
      hstsDirectives: ['max-age=31536000', 'includeSubDomains', 'preload'],
      maxConnectionBytesPerSec: 4096,
    });
  });

  it('rejects bad values with messages naming the option', () => {
    const { messages } = parse([
      '--audit-log-path=/tmp/x.log',
      '--audit-log-format=xml',
      '--audit-log-mode=sometimes',
      '--audit-log-version=audit.k8s.io/v1',
      '--audit-log-maxage=-1',
      '--audit-webhook-config-file=/nowhere',
      '--audit-webhook-batch-buffer-size=0',
      '--audit-webhook-batch-throttle-qps=0',
      '--audit-webhook-truncate-enabled',
      '--audit-webhook-truncate-max-batch-size=10',
      '--audit-webhook-truncate-max-event-size=100',
      '--cors-allowed-origins=(unclosed',
      '--strict-transport-security-directives=max-age=x,nosniff',
      '--max-connection-bytes-per-sec=-5',
    ]);
    expect(messages).toEqual([
      'invalid argument "xml" for "--audit-log-format" flag: invalid audit log format xml, allowed formats are json, legacy',
      'invalid argument "sometimes" for "--audit-log-mode" flag: invalid audit log mode sometimes, allowed modes are batch, blocking, blocking-strict',
      'invalid argument "audit.k8s.io/v1" for "--audit-log-version" flag: invalid audit log version audit.k8s.io/v1, allowed versions are audit.platform/v1, audit.platform/v1beta1',
      "--audit-log-maxage -1 can't be a negative number",
      '--audit-webhook-batch-buffer-size 0: invalid audit batch webhook buffer size, must be a positive number',
      '--audit-webhook-batch-throttle-qps 0: invalid audit batch webhook throttle QPS, must be a positive number',
      '--audit-webhook-truncate-max-batch-size 10: invalid audit truncate webhook max batch size, must be greater than max event size (100)',
      '--strict-transport-security-directives: invalid directive "max-age=x": allowed values: max-age=expireTime, includeSubDomains, preload (RFC 6797 section 6.1)',
      '--strict-transport-security-directives: invalid directive "nosniff": allowed values: max-age=expireTime, includeSubDomains, preload (RFC 6797 section 6.1)',
      expect.stringMatching(/^--cors-allowed-origins: invalid regular expression "\(unclosed": /),
      '--max-connection-bytes-per-sec -5 must not be negative',
    ]);
  });

  it('warns that nothing is recorded without a policy, and names unreadable files', () => {
    const { audit, warnings } = parse([`--audit-log-path=${join(dir, 'a.log')}`]);
    expect(warnings).toEqual(['No --audit-policy-file given: no audit events will be recorded']);
    const bad = parse([`--audit-policy-file=${join(dir, 'missing.yaml')}`]).audit;
    expect(() => bad.applyTo({})).toThrow(/^--audit-policy-file: cannot read .*missing\.yaml/);
    const badHook = parse(['--audit-webhook-config-file=/nowhere/hook']).audit;
    expect(() => badHook.applyTo({})).toThrow(/^--audit-webhook-config-file: \/nowhere\/hook: cannot be read/);
    expect(() => audit.applyTo({})).not.toThrow();
  });
});
