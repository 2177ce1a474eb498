import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseOrExit } from '@platform/common';
import { Command } from 'commander';

import { DEFAULT_ENABLED_PLUGINS } from '../admission/registry';
import { AdmissionOptions, type AdmissionFlagsConfig } from './admission-options';

function parse(argv: string[]): { errors: string[]; options: AdmissionOptions } {
  const options = new AdmissionOptions();
  const cmd = new Command('test');
  options.addFlags(cmd);
  const out = parseOrExit(cmd, [options as never], argv, undefined, { stdout: () => {}, stderr: () => {} });
  return { errors: out.errors.map((e) => e.message), options };
}

describe('AdmissionOptions', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'admission-options-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("defaults to Document 2's plugins and 300 s tolerations", () => {
    const { errors, options } = parse([]);
    expect(errors).toEqual([]);
    const c: AdmissionFlagsConfig = {};
    options.applyTo(c);
    expect([...(c.admission?.plugins ?? [])].sort()).toEqual([...DEFAULT_ENABLED_PLUGINS].sort());
    expect(c.admission?.settings).toEqual({
      defaultNotReadyTolerationSeconds: 300,
      defaultUnreachableTolerationSeconds: 300,
      boundServiceAccountTokenVolume: true,
    });
  });

  it('enables, disables and configures plugins, and reads the client certificate', () => {
    writeFileSync(join(dir, 'c.crt'), 'CERT');
    writeFileSync(join(dir, 'c.key'), 'KEY');
    writeFileSync(
      join(dir, 'admission.json'),
      JSON.stringify({
        apiVersion: 'apiserver.config.platform/v1',
        kind: 'AdmissionConfiguration',
        plugins: [{ name: 'EventRateLimit', configuration: { limits: [{ type: 'Server', qps: 1, burst: 1 }] } }],
      }),
    );
    const { errors, options } = parse([
      '--enable-admission-plugins=EventRateLimit,AlwaysPullImages',
      '--disable-admission-plugins=ResourceQuota',
      `--admission-control-config-file=${join(dir, 'admission.json')}`,
      '--default-not-ready-toleration-seconds=30',
      `--proxy-client-cert-file=${join(dir, 'c.crt')}`,
      `--proxy-client-key-file=${join(dir, 'c.key')}`,
    ]);
    expect(errors).toEqual([]);
    const c: AdmissionFlagsConfig = {};
    options.applyTo(c);
    expect(c.admission?.plugins).toContain('EventRateLimit');
    expect(c.admission?.plugins).toContain('AlwaysPullImages');
    expect(c.admission?.plugins).not.toContain('ResourceQuota');
    expect(c.admission?.configs?.get('EventRateLimit')).toEqual({ limits: [{ type: 'Server', qps: 1, burst: 1 }] });
    expect(c.admission?.settings.defaultNotReadyTolerationSeconds).toBe(30);
    expect(c.admission?.settings.proxyClientCert).toEqual({ cert: 'CERT', key: 'KEY' });
  });

  it('stops on an unknown plugin name with a clear message', () => {
    const { errors } = parse(['--enable-admission-plugins=NamespaceLifecycle,Bogus']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^--enable-admission-plugins\/--disable-admission-plugins: unknown admission plugin: Bogus; known plugins: AlwaysAdmit, /,
    );
  });

  it('needs both halves of the client certificate', () => {
    expect(parse(['--proxy-client-cert-file=/x.crt']).errors).toEqual([
      '--proxy-client-cert-file and --proxy-client-key-file must be given together',
    ]);
  });

  it('refuses a configuration file it cannot read', () => {
    const { errors, options } = parse([`--admission-control-config-file=${join(dir, 'missing.yaml')}`]);
    expect(errors).toEqual([]);
    expect(() => options.applyTo({})).toThrow(/^--admission-control-config-file: cannot read /);
  });
});
