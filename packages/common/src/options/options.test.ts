import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Command } from 'commander';

import { FeatureGate } from '../features/feature-gate';
import { CONTROL_PLANE_FEATURES, NODE_AGENT_FEATURES } from '../features/known-features';
import { type LoggingConfig } from '../logging/config';

import { DelegatedAuthenticationOptions, DelegatedAuthorizationOptions } from './delegated-auth-options';
import { FeatureGateOptions } from './feature-gate-options';
import {
  type OptionGroup,
  boolFlag,
  deprecationWarning,
  durationFlag,
  OptionGroupBase,
  parseCommandLine,
  stringsFlag,
  type FlagDef,
} from './flags';
import { LeaderElectionOptions } from './leader-election-options';
import { LoggingOptions } from './logging-options';
import { MetricsOptions, parseAllowMetricLabels } from './metrics-options';
import { ProfilingOptions } from './profiling-options';
import { SecureServingOptions } from './secure-serving-options';
import { VersionOptions } from './version-options';

function parse(groups: OptionGroup<never>[], argv: string[]) {
  const cmd = new Command('platform-test');
  for (const g of groups) g.addFlags(cmd);
  let help = '';
  const r = parseCommandLine(cmd, groups, argv, (t) => (help += t));
  return { ...r, messages: r.errors.map((e) => e.message), help };
}

class Sample extends OptionGroupBase<unknown> {
  on = false;
  list: string[] = ['a'];
  wait = 5000;
  constructor() {
    super('Sample');
  }
  protected flagDefs(): FlagDef[] {
    return [
      boolFlag('on', 'turn on', this.on, (v) => (this.on = v)),
      stringsFlag('list', 'a list', this.list, (v) => (this.list = v)),
      durationFlag('wait', 'how long', this.wait, (v) => (this.wait = v)),
      boolFlag('old', 'old flag', false, () => {}, { deprecated: 'use --on instead.' }),
    ];
  }
  applyTo(): void {}
}

describe('flag parsing (pflag semantics)', () => {
  it('takes bools as --x, --x=true, --x=false', () => {
    const a = new Sample();
    expect(parse([a], ['--on']).errors).toEqual([]);
    expect(a.on).toBe(true);
    const b = new Sample();
    parse([b], ['--on=true', '--on=false']);
    expect(b.on).toBe(false);
    const c = new Sample();
    expect(parse([c], ['--on=maybe']).messages).toEqual([
      'invalid argument "maybe" for "--on" flag: strconv.ParseBool: parsing "maybe": invalid syntax',
    ]);
  });

  it('accumulates repeated list flags, the first replacing the default', () => {
    const s = new Sample();
    parse([s], ['--list=x,y', '--list', 'z']);
    expect(s.list).toEqual(['x', 'y', 'z']);
    const d = new Sample();
    parse([d], []);
    expect(d.list).toEqual(['a']);
  });

  it('reports every bad value at once, naming each flag, and keeps going', () => {
    const s = new Sample();
    const r = parse([s], ['--wait=5x', '--on=2', '--list=ok']);
    expect(r.messages).toEqual([
      'invalid argument "5x" for "--wait" flag: time: unknown unit "x" in duration "5x"',
      'invalid argument "2" for "--on" flag: strconv.ParseBool: parsing "2": invalid syntax',
    ]);
    expect(s.list).toEqual(['ok']);
  });

  it('words unknown flags and missing values like pflag', () => {
    expect(parse([new Sample()], ['--nope']).messages).toEqual(['unknown flag: --nope']);
    expect(parse([new Sample()], ['--wait']).messages).toEqual(['flag needs an argument: --wait']);
    expect(parse([new Sample()], ['extra']).messages[0]).toMatch(/^unexpected arguments: /);
  });

  it('warns once when a deprecated flag is used, and accepts it', () => {
    const s = new Sample();
    const r = parse([s], ['--old', '--old=false']);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual(['Flag --old has been deprecated, use --on instead.']);
    expect(deprecationWarning('x', 'gone.')).toBe('Flag --x has been deprecated, gone.');
  });

  it('prints help grouped by family with types, defaults and deprecations', () => {
    const r = parse([new Sample(), new VersionOptions('test')], ['--help']);
    expect(r.helpShown).toBe(true);
    expect(r.help).toContain('Usage:\n  platform-test [flags]\n\nSample flags:\n\n');
    expect(r.help).toContain('      --wait duration   how long (default 5s)\n');
    expect(r.help).toContain('      --list strings    a list (default [a])\n');
    expect(r.help).toContain('      --old             old flag (default false) (DEPRECATED: use --on instead.)\n');
    expect(r.help).toContain('Generic flags:');
  });
});

describe('logging options', () => {
  function logging(argv: string[]) {
    const o = new LoggingOptions();
    const r = parse([o], argv);
    const config: { logging?: LoggingConfig } = {};
    if (r.errors.length === 0) o.applyTo(config);
    return { o, r, config: config.logging! };
  }

  it('parses every flag', () => {
    const { r, config } = logging([
      '--add-dir-header',
      '--alsologtostderr',
      '--log-backtrace-at=server.ts:42',
      '--log-dir=/tmp/logs',
      '--log-file=/tmp/x.log',
      '--log-file-max-size=10',
      '--log-flush-frequency=1s',
      '--logtostderr=false',
      '--one-output',
      '--skip-headers',
      '--skip-log-headers',
      '--stderrthreshold=WARNING',
      '-v=4',
      '--vmodule=server*=5,queue=2',
      '--experimental-logging-sanitization',
    ]);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(config).toEqual({
      format: 'text',
      verbosity: 4,
      vmodule: [
        { pattern: 'server*', level: 5 },
        { pattern: 'queue', level: 2 },
      ],
      addDirHeader: true,
      alsoLogToStderr: true,
      logToStderr: false,
      oneOutput: true,
      skipHeaders: true,
      skipLogHeaders: true,
      stderrThreshold: 1,
      backtraceAt: { file: 'server.ts', line: 42 },
      logDir: '/tmp/logs',
      logFile: '/tmp/x.log',
      logFileMaxSizeMB: 10,
      flushFrequencyMs: 1000,
      sanitization: true,
    });
    expect(logging(['-v', '3', '--stderrthreshold=0']).config).toMatchObject({ verbosity: 3, stderrThreshold: 0 });
    expect(logging(['--v=2']).config.verbosity).toBe(2);
  });

  it('rejects every kind of bad value, naming the flag', () => {
    const { r } = logging([
      '--log-flush-frequency=5x',
      '--v=high',
      '-v=-1',
      '--log-file-max-size=-1',
      '--stderrthreshold=LOUD',
      '--vmodule=server',
      '--log-backtrace-at=nofile',
      '--logging-format=yaml',
      '--logtostderr=nope',
    ]);
    expect(r.messages).toEqual([
      'invalid argument "5x" for "--log-flush-frequency" flag: time: unknown unit "x" in duration "5x"',
      'invalid argument "high" for "-v, --v" flag: strconv.ParseInt: parsing "high": invalid syntax',
      'invalid argument "-1" for "-v, --v" flag: must be between 0 and 2147483647, inclusive',
      'invalid argument "-1" for "--log-file-max-size" flag: must be between 0 and 9007199254740991, inclusive',
      'invalid argument "LOUD" for "--stderrthreshold" flag: unknown severity "LOUD": want INFO, WARNING, ERROR, FATAL or 0-3',
      'invalid argument "server" for "--vmodule" flag: syntax error: expect comma-separated list of filename=N, got "server"',
      'invalid argument "nofile" for "--log-backtrace-at" flag: syntax error: expect file.ext:N, got "nofile"',
      'invalid argument "yaml" for "--logging-format" flag: unsupported logging format "yaml": want "json" or "text"',
      'invalid argument "nope" for "--logtostderr" flag: strconv.ParseBool: parsing "nope": invalid syntax',
    ]);
  });

  it('says which set flags --logging-format=json ignores, and ignores them', () => {
    const { r, config } = logging([
      '--logging-format=json',
      '--vmodule=x=2',
      '--skip-headers',
      '--log-file=/tmp/a.log',
      '-v=3',
    ]);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([
      '--logging-format=json ignores --log-file, --skip-headers, --vmodule: these flags only apply to the text format',
    ]);
    expect(config).toMatchObject({ format: 'json', verbosity: 3, vmodule: [], skipHeaders: false, logFile: '' });
    expect(logging(['--logging-format=json']).r.warnings).toEqual([]);
  });

  it('marks --logging-format deprecated for the node agent', () => {
    const o = new LoggingOptions('use the configuration file.');
    expect(parse([o], ['--logging-format=text']).warnings).toEqual([
      'Flag --logging-format has been deprecated, use the configuration file.',
    ]);
  });
});

describe('metrics options', () => {
  it('parses the allow-list, disabled metrics and the hidden version', () => {
    const o = new MetricsOptions();
    const r = parse(
      [o],
      [
        "--allow-metric-labels=apiserver_request_total,verb='GET,LIST',apiserver_request_total,code=200",
        '--allow-metric-labels=workqueue_depth,name="a,b"',
        '--disabled-metrics=a_total,b_total',
        '--disabled-metrics=c_total',
        '--show-hidden-metrics-for-version=1.20',
      ],
    );
    expect(r.errors).toEqual([]);
    const config: Parameters<MetricsOptions['applyTo']>[0] = {};
    o.applyTo(config);
    expect(config.metrics!.disabledMetrics).toEqual(['a_total', 'b_total', 'c_total']);
    const allow = config.metrics!.allowListMapping;
    expect([...allow.get('apiserver_request_total')!.get('verb')!]).toEqual(['GET', 'LIST']);
    expect([...allow.get('apiserver_request_total')!.get('code')!]).toEqual(['200']);
    expect([...allow.get('workqueue_depth')!.get('name')!]).toEqual(['a', 'b']);
    expect(parseAllowMetricLabels('m,l=v1,v2')).toEqual([['m', 'l', ['v1', 'v2']]]);
  });

  it('rejects bad values', () => {
    const r = parse([new MetricsOptions()], ['--allow-metric-labels=justametric', '--disabled-metrics=bad-name']);
    expect(r.messages).toEqual([
      'invalid argument "justametric" for "--allow-metric-labels" flag: malformed entry "justametric": expect <MetricName>,<LabelName>=<allowed_value>,<allowed_value>...',
      'invalid argument "bad-name" for "--disabled-metrics" flag: "bad-name" is not a valid metric name',
    ]);
    expect(parse([new MetricsOptions()], ['--show-hidden-metrics-for-version=1.19']).messages).toEqual([
      "--show-hidden-metrics-for-version must be omitted or have the value '1.20'. Only the previous minor version is allowed",
    ]);
    expect(parse([new MetricsOptions()], ['--show-hidden-metrics-for-version=v1']).messages[0]).toMatch(
      /illegal version string "v1"/,
    );
  });
});

describe('feature gate options', () => {
  it('sets gates, honours AllAlpha/AllBeta, and knows both lists', () => {
    const gate = new FeatureGate(CONTROL_PLANE_FEATURES);
    const r = parse(
      [new FeatureGateOptions(gate)],
      ['--feature-gates=EphemeralContainers=true,ServerSideApply=false', '--feature-gates=AllBeta=true'],
    );
    expect(r.errors).toEqual([]);
    expect(gate.enabled('EphemeralContainers')).toBe(true);
    expect(gate.enabled('ServerSideApply')).toBe(false); // explicit beats AllBeta
    expect(gate.enabled('DownwardAPIHugePages')).toBe(true); // beta, default false, AllBeta
    expect(gate.enabled('IndexedJob')).toBe(false); // alpha untouched
    expect(gate.toString()).toBe('AllBeta=true,EphemeralContainers=true,ServerSideApply=false');
    const g2 = new FeatureGate(CONTROL_PLANE_FEATURES);
    g2.set('AllAlpha=true,IndexedJob=false');
    expect(g2.enabled('MemoryManager')).toBe(true);
    expect(g2.enabled('IndexedJob')).toBe(false);
    expect(g2.enabled('APIListChunking')).toBe(true);
  });

  it('has the gates of both documents with stage and default', () => {
    expect(CONTROL_PLANE_FEATURES.size).toBe(96);
    expect(NODE_AGENT_FEATURES.size).toBe(88);
    expect(CONTROL_PLANE_FEATURES.get('CSIMigrationCloudD')).toEqual({ stage: 'BETA', default: true });
    expect(NODE_AGENT_FEATURES.get('CSIMigrationCloudD')).toEqual({ stage: 'BETA', default: false });
    expect(NODE_AGENT_FEATURES.get('Sysctls')).toEqual({ stage: 'BETA', default: true });
    expect(CONTROL_PLANE_FEATURES.has('Sysctls')).toBe(false);
    const gate = new FeatureGate(NODE_AGENT_FEATURES);
    expect(gate.knownFeatures()).toContain('GracefulNodeShutdown=true|false (ALPHA - default=false)');
    expect(() => gate.enabled('NoSuchGate')).toThrow('feature "NoSuchGate" is not registered in FeatureGate');
  });

  it('rejects unknown gates and bad values, naming them, and changes nothing', () => {
    const gate = new FeatureGate(CONTROL_PLANE_FEATURES);
    const r = parse(
      [new FeatureGateOptions(gate)],
      [
        '--feature-gates=IndexedJob=true,Bogus=true',
        '--feature-gates=IndexedJob=yes',
        '--feature-gates=IndexedJob',
        '--feature-gates=Sysctls=true',
      ],
    );
    expect(r.messages).toEqual([
      'invalid argument "IndexedJob=true,Bogus=true" for "--feature-gates" flag: unrecognized feature gate: Bogus',
      'invalid argument "IndexedJob=yes" for "--feature-gates" flag: invalid value of IndexedJob=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
      'invalid argument "IndexedJob" for "--feature-gates" flag: missing bool value for IndexedJob',
      'invalid argument "Sysctls=true" for "--feature-gates" flag: unrecognized feature gate: Sysctls',
    ]);
    expect(gate.enabled('IndexedJob')).toBe(false);
  });

  it('is deprecated on the node agent', () => {
    const r = parse(
      [new FeatureGateOptions(new FeatureGate(NODE_AGENT_FEATURES), 'set it in the --config file.')],
      ['--feature-gates=Sysctls=false'],
    );
    expect(r.warnings).toEqual(['Flag --feature-gates has been deprecated, set it in the --config file.']);
  });
});

describe('secure serving options', () => {
  const make = (allowDisable = true) =>
    new SecureServingOptions({ port: 10257, certDir: '', pairName: 'controller-manager', allowDisable });

  it('parses every flag', () => {
    const o = make();
    const r = parse(
      [o],
      [
        '--bind-address=::1',
        '--secure-port=9443',
        '--cert-dir=/tmp/certs',
        '--tls-cert-file=/a.crt',
        '--tls-private-key-file=/a.key',
        '--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
        '--tls-cipher-suites=TLS_AES_128_GCM_SHA256',
        '--tls-min-version=VersionTLS12',
        '--tls-sni-cert-key=foo.crt,foo.key:*.foo.com,foo.com',
        '--tls-sni-cert-key=bar.crt,bar.key',
        '--permit-address-sharing',
        '--http2-max-streams-per-connection=100',
      ],
    );
    expect(r.errors).toEqual([]);
    expect(o).toMatchObject({
      bindAddress: '::1',
      port: 9443,
      certDir: '/tmp/certs',
      tlsCertFile: '/a.crt',
      tlsPrivateKeyFile: '/a.key',
      cipherSuites: ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_AES_128_GCM_SHA256'],
      minTLSVersion: 'VersionTLS12',
      sniCertKeys: [
        { certFile: 'foo.crt', keyFile: 'foo.key', names: ['*.foo.com', 'foo.com'] },
        { certFile: 'bar.crt', keyFile: 'bar.key', names: [] },
      ],
      permitAddressSharing: true,
      http2MaxStreamsPerConnection: 100,
    });
  });

  it('rejects every kind of bad value', () => {
    const r = parse(
      [make()],
      [
        '--bind-address=localhost',
        '--secure-port=70000',
        '--tls-cert-file=/only.crt',
        '--tls-cipher-suites=TLS_FAKE_SUITE,TLS_RSA_WITH_AES_128_GCM_SHA256',
        '--tls-min-version=VersionTLS14',
        '--tls-sni-cert-key=onlyone.crt',
        '--http2-max-streams-per-connection=-1',
        '--permit-port-sharing=x',
      ],
    );
    expect(r.messages).toEqual([
      'invalid argument "localhost" for "--bind-address" flag: failed to parse IP: "localhost"',
      'invalid argument "onlyone.crt" for "--tls-sni-cert-key" flag: expected comma separated certificate and key file paths',
      'invalid argument "x" for "--permit-port-sharing" flag: strconv.ParseBool: parsing "x": invalid syntax',
      '--secure-port 70000 must be between 0 and 65535, inclusive. 0 for turning off secure port',
      '--tls-cert-file and --tls-private-key-file must be given together',
      "--tls-cipher-suites: cipher suite TLS_FAKE_SUITE not supported or doesn't exist",
      '--tls-min-version: unknown tls version "VersionTLS14": allowed values are VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13',
      '--http2-max-streams-per-connection must not be negative',
    ]);
    expect(parse([make(false)], ['--secure-port=0']).messages).toEqual([
      '--secure-port 0 must be between 1 and 65535, inclusive. It cannot be turned off with 0',
    ]);
    expect(parse([make()], ['--tls-sni-cert-key=a.crt,a.key:bad_name!']).messages[0]).toMatch(
      /invalid domain pattern "bad_name!"/,
    );
  });

  it('warns about insecure cipher suites', () => {
    const r = parse([make()], ['--tls-cipher-suites=TLS_RSA_WITH_AES_128_CBC_SHA256']);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual(["Use of insecure cipher 'TLS_RSA_WITH_AES_128_CBC_SHA256' detected."]);
  });

  it('allows 0 to switch HTTPS off where the daemon allows it', async () => {
    const o = make();
    expect(parse([o], ['--secure-port=0']).errors).toEqual([]);
    const config: Parameters<SecureServingOptions['applyTo']>[0] = {};
    await o.applyTo(config);
    expect(config.secureServing).toBeUndefined();
  });

  it('names unreadable certificate files when applying', async () => {
    const o = make();
    parse([o], ['--tls-cert-file=/nonexistent/a.crt', '--tls-private-key-file=/nonexistent/a.key']);
    await expect(o.applyTo({})).rejects.toThrow('unable to read certificate file "/nonexistent/a.crt": ENOENT');
  });
});

describe('leader election options', () => {
  it('parses and defaults per daemon', () => {
    const o = new LeaderElectionOptions('scheduler');
    const r = parse(
      [o],
      [
        '--leader-elect-lease-duration=30s',
        '--leader-elect-renew-deadline=20s',
        '--leader-elect-retry-period=3s',
        '--leader-elect-resource-namespace=kube',
      ],
    );
    expect(r.errors).toEqual([]);
    const c: Parameters<LeaderElectionOptions['applyTo']>[0] = {};
    o.applyTo(c);
    expect(c.leaderElection).toEqual({
      leaderElect: true,
      leaseDurationMs: 30_000,
      renewDeadlineMs: 20_000,
      retryPeriodMs: 3_000,
      resourceLock: 'leases',
      resourceName: 'scheduler',
      resourceNamespace: 'kube',
    });
  });

  it('rejects unsupported locks and inconsistent durations', () => {
    expect(parse([new LeaderElectionOptions('cm')], ['--leader-elect-resource-lock=endpoints']).messages).toEqual([
      '--leader-elect-resource-lock=endpoints is not supported yet: only "leases" is implemented',
    ]);
    expect(parse([new LeaderElectionOptions('cm')], ['--leader-elect-resource-lock=zookeeper']).messages[0]).toBe(
      '--leader-elect-resource-lock: unknown lock type "zookeeper": want one of endpoints, configmaps, leases, endpointsleases, configmapsleases',
    );
    expect(parse([new LeaderElectionOptions('cm')], ['--leader-elect-renew-deadline=20s']).messages).toEqual([
      '--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline',
    ]);
    expect(parse([new LeaderElectionOptions('cm')], ['--leader-elect-retry-period=9s']).messages).toEqual([
      '--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period',
    ]);
    expect(
      parse([new LeaderElectionOptions('cm')], ['--leader-elect=false', '--leader-elect-retry-period=9s']).errors,
    ).toEqual([]);
    expect(parse([new LeaderElectionOptions('cm')], ['--leader-elect-lease-duration=-1s']).messages).toEqual([
      'invalid argument "-1s" for "--leader-elect-lease-duration" flag: duration must not be negative',
    ]);
  });
});

describe('delegated authentication and authorization options', () => {
  it('parses values and checks files exist', () => {
    const dir = mkdtempSync(join(tmpdir(), 'authn-'));
    const ca = join(dir, 'ca.crt');
    writeFileSync(ca, 'x');
    const authn = new DelegatedAuthenticationOptions({ tolerateLookupFailure: true });
    const authz = new DelegatedAuthorizationOptions();
    const r = parse(
      [authn, authz],
      [
        `--client-ca-file=${ca}`,
        '--requestheader-username-headers=X-Remote-User,X-User',
        '--authentication-token-webhook-cache-ttl=1m',
        '--authorization-always-allow-paths=/healthz,/metrics',
        '--authorization-webhook-cache-unauthorized-ttl=5s',
      ],
    );
    expect(r.errors).toEqual([]);
    const c: Parameters<DelegatedAuthenticationOptions['applyTo']>[0] &
      Parameters<DelegatedAuthorizationOptions['applyTo']>[0] = {};
    authn.applyTo(c);
    authz.applyTo(c);
    expect(c.authentication).toMatchObject({
      clientCAFile: ca,
      tolerateLookupFailure: true,
      tokenWebhookCacheTTLMs: 60_000,
      requestHeader: {
        usernameHeaders: ['X-Remote-User', 'X-User'],
        groupHeaders: ['x-remote-group'],
        extraHeaderPrefixes: ['x-remote-extra-'],
      },
    });
    expect(c.authorization).toEqual({
      remoteKubeConfigFile: '',
      alwaysAllowPaths: ['/healthz', '/metrics'],
      allowCacheTTLMs: 10_000,
      denyCacheTTLMs: 5_000,
    });
  });

  it('rejects bad values', () => {
    const r = parse(
      [new DelegatedAuthenticationOptions(), new DelegatedAuthorizationOptions()],
      [
        '--authentication-clientconfig=/nonexistent/kubeconfig',
        '--requestheader-group-headers=bad header',
        '--authorization-always-allow-paths=healthz',
        '--authentication-skip-lookup=maybe',
      ],
    );
    expect(r.messages).toEqual([
      'invalid argument "bad header" for "--requestheader-group-headers" flag: "bad header" is not a valid HTTP header name',
      'invalid argument "maybe" for "--authentication-skip-lookup" flag: strconv.ParseBool: parsing "maybe": invalid syntax',
      '--authentication-clientconfig: file "/nonexistent/kubeconfig" does not exist',
      'invalid argument "healthz" for "--authorization-always-allow-paths" flag: path "healthz" must start with "/"',
    ]);
  });
});

describe('generic options', () => {
  it('handles --version, --version=true, --version=raw, --version=false', () => {
    const cases: [string[], RegExp | undefined][] = [
      [['--version'], /^platform-scheduler v0\.1\.0\n$/],
      [['--version=true'], /^platform-scheduler v0\.1\.0\n$/],
      [['--version=raw'], /^version\.Info\{Major:"1", Minor:"21", GitVersion:"v1\.21\.0\+platform\.0\.1\.0", /],
      [['--version=false'], undefined],
      [[], undefined],
    ];
    for (const [argv, expected] of cases) {
      const v = new VersionOptions('scheduler');
      expect(parse([v], argv).errors).toEqual([]);
      let out = '';
      expect(v.printIfRequested((t) => (out += t))).toBe(expected !== undefined);
      if (expected) expect(out).toMatch(expected);
    }
    expect(parse([new VersionOptions('x')], ['--version=maybe']).messages).toEqual([
      'invalid argument "maybe" for "--version" flag: want true, false or raw, got "maybe"',
    ]);
  });

  it('has per-daemon profiling defaults and deprecations', () => {
    const cm = new ProfilingOptions();
    parse([cm], []);
    expect([cm.enableProfiling, cm.enableContentionProfiling]).toEqual([true, false]);
    const sched = new ProfilingOptions({
      contentionProfiling: true,
      profilingDeprecated: 'use the --config file.',
      contentionProfilingDeprecated: 'use the --config file.',
    });
    const r = parse([sched], ['--profiling=false']);
    expect(sched.enableProfiling).toBe(false);
    expect(sched.enableContentionProfiling).toBe(true);
    expect(r.warnings).toEqual(['Flag --profiling has been deprecated, use the --config file.']);
  });
});
