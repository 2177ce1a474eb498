// The path every daemon's main takes, end to end with the real parts: command line → option families →
// configuration → logging, metrics and the secure server → HTTPS requests on 127.0.0.1.
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FeatureGate } from '../features/feature-gate';
import { CONTROL_PLANE_FEATURES } from '../features/known-features';
import { type LoggingConfig } from '../logging/config';
import { createLogging } from '../logging/create-logging';
import { MetricsRegistry } from '../metrics/registry';
import { buildCommand, parseOrExit } from '../options/command';
import { FeatureGateOptions } from '../options/feature-gate-options';
import { LeaderElectionOptions } from '../options/leader-election-options';
import { LoggingOptions } from '../options/logging-options';
import { type MetricsConfig, MetricsOptions } from '../options/metrics-options';
import { type ProfilingConfig, ProfilingOptions } from '../options/profiling-options';
import { type SecureServingInfo, SecureServingOptions } from '../options/secure-serving-options';
import { VersionOptions } from '../options/version-options';

import { SecureServer } from './secure-server';

function get(port: number, path: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, ca, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a daemon main: options → config → run', () => {
  it('parses the shared families, builds logging, metrics and the server, and serves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'daemon-'));
    const version = new VersionOptions('controller-manager');
    const serving = new SecureServingOptions({
      port: 10257,
      certDir: join(dir, 'pki'),
      pairName: 'controller-manager',
    });
    const logging = new LoggingOptions();
    const metrics = new MetricsOptions();
    const profiling = new ProfilingOptions();
    const gate = new FeatureGate(CONTROL_PLANE_FEATURES);
    const groups = [
      version,
      serving,
      profiling,
      new LeaderElectionOptions('controller-manager'),
      logging,
      metrics,
      new FeatureGateOptions(gate),
    ];
    const cmd = buildCommand('platform-controller-manager', 'The controller manager.', groups);
    let err = '';
    const outcome = parseOrExit(
      cmd,
      groups,
      [
        '--bind-address=127.0.0.1',
        '--secure-port=1',
        '--logtostderr=false',
        `--log-file=${join(dir, 'cm.log')}`,
        '--skip-log-headers',
        '--disabled-metrics=hidden_total',
        '--feature-gates=IndexedJob=true',
        '--profiling=false',
      ],
      version,
      { stdout: () => {}, stderr: (t) => (err += t) },
    );
    expect(outcome).toEqual({ errors: [] });
    expect(err).toBe('');

    const config: {
      logging?: LoggingConfig;
      metrics?: MetricsConfig;
      profiling?: ProfilingConfig;
      secureServing?: SecureServingInfo;
    } = {};
    for (const g of groups) await g.applyTo(config as never);
    expect(gate.enabled('IndexedJob')).toBe(true);

    const logs = createLogging({ config: config.logging!, program: 'platform-controller-manager' });
    const registry = new MetricsRegistry(config.metrics, { collectDefaultMetrics: false });
    registry.counter({ name: 'hidden_total', help: 'x' }).inc();
    registry.counter({ name: 'shown_total', help: 'y' }).inc();
    // Port 1 was only there to pass validation; bind an ephemeral port for the test.
    const server = new SecureServer({
      serving: { ...config.secureServing!, port: 0 },
      logger: logs.logger.child('controller-manager'),
      metrics: registry,
      enableProfiling: config.profiling!.enableProfiling,
      logging: logs,
    });
    const { port } = await server.start();
    try {
      const ca = readFileSync(join(dir, 'pki', 'controller-manager.crt'), 'utf8').match(
        /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g,
      )![1]!;
      expect(await get(port, '/healthz?verbose', ca)).toEqual({
        status: 200,
        body: '[+]ping ok\n[+]log ok\nhealthz check passed\n',
      });
      const m = await get(port, '/metrics', ca);
      expect(m.body).toContain('shown_total 1');
      expect(m.body).not.toContain('hidden_total');
      expect((await get(port, '/debug/pprof/', ca)).status).toBe(404);
    } finally {
      await server.shutdown();
      await logs.close();
    }
    const logText = readFileSync(join(dir, 'cm.log'), 'utf8');
    expect(logText).toMatch(
      /^I\d{4} [\d:.]+ +\d+ secure-server\.ts:\d+\] "Serving securely" logger="controller-manager" address="127\.0\.0\.1:\d+"\n/,
    );
    expect(logText).toContain('"Shutdown complete" logger="controller-manager"');
  });
});
