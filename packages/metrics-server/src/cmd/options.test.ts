import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseCommandLine } from '@platform/common';

import { metricsServerCommand } from './main';

let dir: string;
let conf: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'metrics-server-options-'));
  conf = join(dir, 'client.conf');
  writeFileSync(conf, 'apiVersion: v1\nkind: Config\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function parse(argv: string[]): { errors: string[]; warnings: string[] } {
  const { cmd, groups } = metricsServerCommand();
  const r = parseCommandLine(cmd, groups, argv, () => {});
  return { errors: r.errors.map((e) => e.message), warnings: r.warnings };
}

describe('metrics server options', () => {
  it("takes metrics-server's defaults and needs only --clientconfig", () => {
    const { cmd } = metricsServerCommand();
    const help = cmd.options.map((o) => o.long);
    for (const flag of [
      '--clientconfig',
      '--metric-resolution',
      '--agent-port',
      '--agent-use-node-status-port',
      '--agent-preferred-address-types',
      '--agent-insecure-tls',
      '--agent-certificate-authority',
      '--agent-client-certificate',
      '--agent-client-key',
      '--deprecated-agent-completely-insecure',
      '--secure-port',
      '--client-ca-file',
      '--requestheader-client-ca-file',
      '--authorization-always-allow-paths',
    ])
      expect(help).toContain(flag);
    expect(parse([`--clientconfig=${conf}`])).toEqual({ errors: [], warnings: [] });
    expect(parse([]).errors).toEqual(['--clientconfig is required (there is no in-cluster configuration)']);
  });

  it.each([
    [
      ['--metric-resolution=500ms'],
      '--metric-resolution should be a time duration at least 1s, but value 500ms provided',
    ],
    [['--agent-preferred-address-types=InternalIP,Nowhere'], 'unknown node address type "Nowhere"'],
    [['--agent-port=0'], '--agent-port'],
    [['--agent-client-certificate=/no/such.crt'], '--agent-client-certificate: file "/no/such.crt" does not exist'],
    [
      ['--agent-insecure-tls', `--agent-certificate-authority=${__filename}`],
      'cannot use both --agent-certificate-authority and --agent-insecure-tls',
    ],
    [
      [`--agent-client-certificate=${__filename}`],
      '--agent-client-certificate and --agent-client-key must be given together',
    ],
    [
      ['--deprecated-agent-completely-insecure', '--agent-insecure-tls'],
      'cannot use --deprecated-agent-completely-insecure with --agent-insecure-tls',
    ],
  ])('refuses %j naming the option', (argv, message) => {
    expect(parse([`--clientconfig=${conf}`, ...argv]).errors.join('\n')).toContain(message);
  });

  it('warns about a resolution below 10s', () => {
    expect(parse([`--clientconfig=${conf}`, '--metric-resolution=2s']).warnings).toEqual([
      '--metric-resolution below 10s scrapes the node agents often: meant for tests and demonstrations',
    ]);
  });
});
