import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseCommandLine } from '@platform/common';

import { nodeAgentCommand } from './main';
import { nodeLabelAllowed, parseTaint, parseThresholds } from './options';

function parse(argv: string[]) {
  const c = nodeAgentCommand();
  const r = parseCommandLine(c.cmd, c.groups, argv, () => {});
  return { ...r, v: c.agent.values };
}

test('defaults are Document 3s', () => {
  const { v, errors } = parse([]);
  expect(errors).toEqual([]);
  expect(v.port).toBe(10250);
  expect(v.readOnlyPort).toBe(10255);
  expect(v.healthzPort).toBe(10248);
  expect(v.maxPods).toBe(110);
  expect(v.containerRuntime).toBe('builtin');
  expect(v.nodeStatusUpdateFrequency).toBe(10_000);
  expect(v.evictionHard.get('memory.available')).toBe('100Mi');
  expect(v.authorizationMode).toBe('AlwaysAllow');
});

test('invalid values are errors naming the option', () => {
  const { errors } = parse([
    '--max-pods=x',
    '--container-runtime=docker',
    '--node-labels=kubernetes.io/foo=bar',
    '--eviction-hard=memory.available=1',
  ]);
  const text = errors.map((e) => e.message).join('\n');
  expect(text).toMatch(/--max-pods/);
  expect(text).toMatch(/--container-runtime/);
  expect(text).toMatch(/--node-labels/);
  expect(text).toMatch(/--eviction-hard/);
});

test('the configuration file sets (D) options; the command line wins', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-config-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    [
      'apiVersion: agent.config.platform/v1beta1',
      'kind: AgentConfiguration',
      'maxPods: 42',
      'port: 11250',
      'syncFrequency: 30s',
      'evictionHard: {memory.available: 200Mi}',
      'authentication: {anonymous: {enabled: false}}',
      'featureGates: {QOSReserved: true}',
      '',
    ].join('\n'),
  );
  const { v, errors } = parse([`--config=${file}`, '--port=12250']);
  expect(errors).toEqual([]);
  expect(v.maxPods).toBe(42);
  expect(v.port).toBe(12250);
  expect(v.syncFrequency).toBe(30_000);
  expect(v.evictionHard.get('memory.available')).toBe('200Mi');
  expect(v.anonymousAuth).toBe(false);
  expect(v.authorizationMode).toBe('Webhook');
  writeFileSync(file, 'apiVersion: agent.config.platform/v1beta1\nkind: AgentConfiguration\nmaxPods: lots\n');
  expect(
    parse([`--config=${file}`])
      .errors.map((e) => e.message)
      .join(),
  ).toMatch(/maxPods \(--max-pods\)/);
});

test('node labels, taints and thresholds', () => {
  expect(nodeLabelAllowed('node.platform/role')).toBe(true);
  expect(nodeLabelAllowed('agent.platform/x')).toBe(true);
  expect(nodeLabelAllowed('kubernetes.io/hostname')).toBe(true);
  expect(nodeLabelAllowed('platform/secret')).toBe(false);
  expect(nodeLabelAllowed('example.com/x')).toBe(true);
  expect(parseTaint('a=b:NoSchedule')).toEqual({ key: 'a', value: 'b', effect: 'NoSchedule' });
  expect(parseTaint('a:NoExecute')).toEqual({ key: 'a', effect: 'NoExecute' });
  expect(() => parseTaint('a=b')).toThrow();
  expect(parseThresholds('memory.available<1Gi,nodefs.available<10%')).toEqual(
    new Map([
      ['memory.available', '1Gi'],
      ['nodefs.available', '10%'],
    ]),
  );
});
