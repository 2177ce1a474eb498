/**
 * The deployment files (docker-compose.yml, Dockerfile, deploy/systemd/) name options and paths of this repository:
 * they are checked here against the API server's own command-line parser and the files they run, so a renamed
 * option or a moved binary fails the suite instead of a user's deployment.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { apiServerCommand } from '@platform/apiserver';
import { parseCommandLine } from '@platform/common';
import { load } from 'js-yaml';

import { ROOT } from './support/process';

function apiServerErrors(args: string[]): string[] {
  const { cmd, groups } = apiServerCommand();
  const r = parseCommandLine(cmd, groups, args, () => {});
  return r.errors.map((e) => e.message);
}

interface Compose {
  services: Record<string, { command?: string[]; image?: string; ports?: string[] }>;
}

describe('docker-compose.yml', () => {
  const compose = load(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as Compose;
  const apiservers = Object.entries(compose.services).filter(([name]) => name.startsWith('apiserver'));

  it('runs two API servers on a three-member etcd cluster', () => {
    expect(apiservers.map(([name]) => name)).toEqual(['apiserver1', 'apiserver2']);
    expect(Object.keys(compose.services).filter((n) => n.startsWith('etcd'))).toEqual(['etcd1', 'etcd2', 'etcd3']);
  });

  it.each(['apiserver1', 'apiserver2'])('gives %s a command line the API server accepts', (name) => {
    const command = compose.services[name]?.command ?? [];
    expect(command[0]).toBe('platform-apiserver');
    expect(apiServerErrors(command.slice(1))).toEqual([]);
    expect(command).toContain('--store-servers=http://etcd1:2379,http://etcd2:2379,http://etcd3:2379');
  });

  it('publishes the API servers on 127.0.0.1 only', () => {
    for (const [, s] of apiservers) for (const p of s.ports ?? []) expect(p).toMatch(/^127\.0\.0\.1:/);
  });
});

describe('deploy/systemd', () => {
  it('gives the API server unit an option list the API server accepts', () => {
    const env = readFileSync(join(ROOT, 'deploy', 'systemd', 'apiserver.env'), 'utf8');
    const m = /^APISERVER_ARGS="([^"]*)"$/m.exec(env);
    expect(m).not.toBeNull();
    const args = m![1]!.split(/\s+/).filter(Boolean);
    expect(apiServerErrors(args)).toEqual([]);
  });

  it.each([
    ['platform-apiserver.service', 'packages/apiserver/bin/platform-apiserver'],
    ['platform-up.service', 'packages/cluster/bin/platform'],
  ])('%s runs a program of this repository', (unit, bin) => {
    const text = readFileSync(join(ROOT, 'deploy', 'systemd', unit), 'utf8');
    const exec = /^ExecStart=\/usr\/bin\/node \/opt\/platform\/(\S+)/m.exec(text);
    expect(exec?.[1]).toBe(bin);
    expect(existsSync(join(ROOT, bin))).toBe(true);
  });
});

it('builds an image whose default command is an installed program', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  expect(dockerfile).toMatch(/^RUN npm ci && npm prune --omit=dev$/m);
  const cmd = /^CMD \["([^"]+)"/m.exec(dockerfile)?.[1];
  expect(cmd).toBe('platform-apiserver');
  // npm links the bins of the workspaces into node_modules/.bin, which the image puts on PATH.
  expect(existsSync(join(ROOT, 'node_modules', '.bin', cmd!))).toBe(true);
});
