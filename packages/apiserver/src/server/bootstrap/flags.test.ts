/**
 * The bootstrap's command line (ServerRunOptions: `--endpoint-reconciler-type`, `--apiserver-count`,
 * `--platform-service-node-port`, `--livez-grace-period`) and its pure helpers (advertise address, service IP,
 * rule coverage).
 */
import { type NetworkInterfaceInfo } from 'node:os';

import { parseCommandLine } from '@platform/common';
import { Command } from 'commander';

import { type ApiServerFlagsConfig, ServerRunOptions } from '../../cmd/options';

import { defaultAdvertiseAddress } from './advertise-address';
import { platformServiceIP } from './bootstrap';
import { rulesCover } from './rbac';

function parse(argv: string[]): { errors: string[]; config: ApiServerFlagsConfig } {
  const o = new ServerRunOptions();
  const cmd = new Command('platform-test');
  o.addFlags(cmd);
  const r = parseCommandLine(cmd, [o], argv, () => {});
  const config: ApiServerFlagsConfig = {};
  if (r.errors.length === 0) o.applyTo(config);
  return { errors: r.errors.map((e) => e.message), config };
}

describe('bootstrap flags', () => {
  it('defaults to the lease reconciler, one server, a ClusterIP service and no grace period', () => {
    const { errors, config } = parse([]);
    expect(errors).toEqual([]);
    expect(config.bootstrap).toEqual({
      endpointReconcilerType: 'lease',
      apiServerCount: 1,
      platformServiceNodePort: 0,
    });
    expect(config.livezGracePeriodMs).toBe(0);
    expect(config.inert ?? []).not.toContain('--apiserver-count');
  });

  it('takes every value', () => {
    const { errors, config } = parse([
      '--endpoint-reconciler-type=master-count',
      '--apiserver-count=3',
      '--platform-service-node-port=30443',
      '--livez-grace-period=90s',
    ]);
    expect(errors).toEqual([]);
    expect(config.bootstrap).toEqual({
      endpointReconcilerType: 'master-count',
      apiServerCount: 3,
      platformServiceNodePort: 30443,
    });
    expect(config.livezGracePeriodMs).toBe(90_000);
    expect(config.inert ?? []).toEqual([]);
  });

  it.each([
    [['--endpoint-reconciler-type=static'], /supported values: lease, master-count, none/],
    [['--apiserver-count=0'], /apiserver-count/],
    [['--platform-service-node-port=70000'], /platform-service-node-port/],
    [['--platform-service-node-port=8443'], /outside --service-node-port-range 30000-32767/],
    [['--livez-grace-period=-1s'], /livez-grace-period/],
  ])('rejects %j', (argv, message) => {
    const { errors } = parse(argv);
    expect(errors.join('\n')).toMatch(message);
  });
});

describe('defaultAdvertiseAddress', () => {
  const ifaces = (): NodeJS.Dict<NetworkInterfaceInfo[]> => ({
    lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true } as NetworkInterfaceInfo],
    eth0: [
      { address: 'fe80::1', family: 'IPv6', internal: false } as NetworkInterfaceInfo,
      { address: '10.1.2.3', family: 'IPv4', internal: false } as NetworkInterfaceInfo,
    ],
  });
  it.each([
    ['192.0.2.1', '10.0.0.9', '192.0.2.1'],
    ['', '10.0.0.9', '10.0.0.9'],
    ['', '0.0.0.0', '10.1.2.3'],
    ['', '::', '10.1.2.3'],
  ])('advertise %j, bind %j → %s', (advertise, bind, expected) => {
    expect(defaultAdvertiseAddress(advertise, bind, ifaces)).toBe(expected);
  });
  it('falls back to 127.0.0.1 without another interface', () => {
    expect(defaultAdvertiseAddress('', '0.0.0.0', () => ({ lo: ifaces().lo }))).toBe('127.0.0.1');
  });
});

describe('platformServiceIP', () => {
  it('is the first address of the primary range', () => {
    expect(platformServiceIP('10.0.0.0/24')).toBe('10.0.0.1');
    expect(platformServiceIP('172.20.0.0/16')).toBe('172.20.0.1');
  });
});

describe('rulesCover', () => {
  const rule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'services'] };
  it.each([
    ['the same rule', [rule], true],
    ['a wildcard rule', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], true],
    [
      'two rules together',
      [
        { ...rule, resources: ['pods'] },
        { ...rule, resources: ['services'] },
      ],
      true,
    ],
    ['a rule missing a verb', [{ ...rule, verbs: ['get'] }], false],
    ['a rule limited to names', [{ ...rule, resourceNames: ['a'] }], false],
    ['a URL rule', [{ verbs: ['get', 'list'], nonResourceURLs: ['*'] }], false],
  ])('%s', (_name, rules, expected) => {
    expect(rulesCover(rules, rule)).toBe(expected);
  });
  it('covers URLs by prefix wildcards', () => {
    expect(
      rulesCover([{ verbs: ['get'], nonResourceURLs: ['/apis/*'] }], { verbs: ['get'], nonResourceURLs: ['/apis/x'] }),
    ).toBe(true);
    expect(
      rulesCover([{ verbs: ['get'], nonResourceURLs: ['/api'] }], { verbs: ['get'], nonResourceURLs: ['/apis'] }),
    ).toBe(false);
  });
});
