import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseOrExit } from '@platform/common';
import { Command } from 'commander';

import { AgentTransport } from '../registry/core/pod/agent-proxy';
import { AgentClientOptions, type ApiServerFlagsConfig } from './options';

function parse(argv: string[]): { errors: string[]; config: ApiServerFlagsConfig } {
  const options = new AgentClientOptions();
  const cmd = new Command('test');
  options.addFlags(cmd);
  const out = parseOrExit(cmd, [options as never], argv, undefined, { stdout: () => {}, stderr: () => {} });
  const config: ApiServerFlagsConfig = {};
  if (out.errors.length === 0) options.applyTo(config);
  return { errors: out.errors.map((e) => e.message), config };
}

test("the --agent-* options have Kubernetes' --kubelet-* defaults", () => {
  const { errors, config } = parse([]);
  expect(errors).toEqual([]);
  expect(config.agentClient).toEqual({
    preferredAddressTypes: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'],
    timeoutMs: 5000,
  });
});

test('values are applied, and bad ones are errors naming the option', () => {
  const ok = parse([
    '--agent-client-certificate=/c.crt',
    '--agent-client-key=/c.key',
    '--agent-certificate-authority=/ca.crt',
    '--agent-preferred-address-types=InternalIP,Hostname',
    '--agent-timeout=2s',
  ]);
  expect(ok.errors).toEqual([]);
  expect(ok.config.agentClient).toEqual({
    caFile: '/ca.crt',
    certFile: '/c.crt',
    keyFile: '/c.key',
    preferredAddressTypes: ['InternalIP', 'Hostname'],
    timeoutMs: 2000,
  });
  expect(parse(['--agent-preferred-address-types=InternalIP,Nowhere']).errors.join('\n')).toMatch(
    /--agent-preferred-address-types.*Nowhere/,
  );
  expect(parse(['--agent-client-certificate=/c.crt']).errors.join('\n')).toMatch(
    /--agent-client-certificate and --agent-client-key must be given together/,
  );
  expect(parse(['--agent-timeout=soon']).errors.join('\n')).toMatch(/--agent-timeout/);
});

test('a credentials file that cannot be read fails the start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-client-'));
  try {
    expect(
      () => new AgentTransport({ caFile: join(dir, 'absent.crt'), preferredAddressTypes: [], timeoutMs: 1 }),
    ).toThrow(/--agent-certificate-authority: .*absent\.crt/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
