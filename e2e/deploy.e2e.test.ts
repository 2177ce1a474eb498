/**
 * The deployment files (docker-compose.yml, Dockerfile, deploy/systemd/) name options and paths of this repository:
 * they are checked here against the API server's own command-line parser and the files they run, so a renamed
 * option or a moved binary fails the suite instead of a user's deployment.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { spawnSync } from 'node:child_process';

import { apiServerCommand } from '@platform/apiserver';
import { type OptionGroup, parseCommandLine } from '@platform/common';
import { controllerManagerCommand } from '@platform/controller-manager';
import { metricsServerCommand } from '@platform/metrics-server';
import { nodeAgentCommand } from '@platform/node-agent';
import { schedulerCommand } from '@platform/scheduler';
import { type Command } from 'commander';
import { load } from 'js-yaml';

import { ROOT } from './support/process';

/** Each daemon's own command-line parser, by its program name. */
const PARSERS: Record<string, () => { cmd: Command; groups: OptionGroup<never>[] }> = {
  'platform-apiserver': apiServerCommand,
  'platform-controller-manager': controllerManagerCommand,
  'platform-scheduler': schedulerCommand,
  'platform-node-agent': nodeAgentCommand,
  'platform-metrics-server': metricsServerCommand,
};

/**
 * What the daemon's parser finds wrong with `args` (empty when it accepts them). The files they name exist on the
 * target machine (or volume), not here: that a named file is missing is not counted.
 */
function flagErrors(program: string, args: string[]): string[] {
  const parser = PARSERS[program];
  if (!parser) return [`no such daemon: ${program}`];
  const { cmd, groups } = parser();
  const r = parseCommandLine(cmd, groups, args, () => {});
  return r.errors
    .map((e) => e.message)
    .filter((m) => !/: file "\/(etc|var\/lib)\/platform\/[^"]+" does not exist$/.test(m));
}

interface Compose {
  services: Record<
    string,
    {
      command?: string[];
      image?: string;
      restart?: string;
      ports?: string[];
      healthcheck?: { test?: string[] };
      depends_on?: unknown;
    }
  >;
}

describe('docker-compose.yml', () => {
  const compose = load(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as Compose;
  const services = Object.entries(compose.services);
  const named = (prefix: string): string[] => services.map(([n]) => n).filter((n) => n.startsWith(prefix));

  it('runs the whole cluster: 3 etcd members, 2 API servers, 2 controller managers, 2 schedulers, 2 nodes, the metrics server', () => {
    expect(named('etcd')).toEqual(['etcd1', 'etcd2', 'etcd3']);
    expect(named('apiserver')).toEqual(['apiserver1', 'apiserver2']);
    expect(named('controller-manager')).toEqual(['controller-manager1', 'controller-manager2']);
    expect(named('scheduler')).toEqual(['scheduler1', 'scheduler2']);
    expect(named('node')).toEqual(['node1', 'node2']);
    expect(named('metrics-server')).toEqual(['metrics-server', 'metrics-server-register']);
  });

  it('registers the metrics server by the name the API servers dial, at its port, and trusts the front proxy', () => {
    const ms = compose.services['metrics-server']?.command ?? [];
    expect(ms).toContain('--secure-port=4443');
    const register = compose.services['metrics-server-register']?.command ?? [];
    expect(register.slice(0, 2)).toEqual(['platform', 'register-metrics-server']);
    expect(register).toEqual(expect.arrayContaining(['--address=metrics-server', '--port=4443']));
    for (const n of named('apiserver'))
      expect(compose.services[n]?.command).toEqual(
        expect.arrayContaining([
          '--proxy-client-cert-file=/var/lib/platform/pki/front-proxy-client.crt',
          '--requestheader-client-ca-file=/var/lib/platform/pki/front-proxy-ca.crt',
        ]),
      );
  });

  it.each(services.filter(([, s]) => PARSERS[s.command?.[0] ?? ''] !== undefined).map(([n]) => n))(
    'gives %s a command line its daemon accepts',
    (name) => {
      const command = compose.services[name]?.command ?? [];
      expect(flagErrors(command[0]!, command.slice(1))).toEqual([]);
    },
  );

  it('points the API servers at every etcd member and elects the controller managers and schedulers', () => {
    for (const n of named('apiserver'))
      expect(compose.services[n]?.command).toContain(
        '--store-servers=http://etcd1:2379,http://etcd2:2379,http://etcd3:2379',
      );
    for (const n of [...named('controller-manager'), ...named('scheduler')])
      expect(compose.services[n]?.command).toContain('--leader-elect=true');
  });

  it("writes the credentials first, with the platform init command, and checks every daemon's health", () => {
    expect(compose.services.init?.command?.slice(0, 2)).toEqual(['platform', 'init']);
    // The one-shot services (init, the metrics server's registration) run the platform command once.
    for (const [, s] of services)
      if (s.restart !== 'no') expect(s.healthcheck?.test?.length).toBeGreaterThan(0);
      else expect(s.command?.[0]).toBe('platform');
  });

  it('publishes the API servers on 127.0.0.1 only', () => {
    for (const n of named('apiserver'))
      for (const p of compose.services[n]?.ports ?? []) expect(p).toMatch(/^127\.0\.0\.1:/);
    for (const n of services.map(([x]) => x).filter((x) => !x.startsWith('apiserver')))
      expect(compose.services[n]?.ports).toBeUndefined();
  });

  const dockerCompose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' });
  (dockerCompose.status === 0 ? it : it.skip)('is valid for docker-compose (config, no Docker engine needed)', () => {
    const r = spawnSync('docker-compose', ['-f', join(ROOT, 'docker-compose.yml'), 'config', '-q'], {
      encoding: 'utf8',
      cwd: ROOT,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
  if (dockerCompose.status !== 0)
    console.log('docker-compose is not installed (apt-get install docker-compose): the compose validation is skipped');
});

describe('deploy/systemd', () => {
  it.each([
    ['apiserver.env', 'APISERVER_ARGS', 'platform-apiserver'],
    ['controller-manager.env', 'CONTROLLER_MANAGER_ARGS', 'platform-controller-manager'],
    ['scheduler.env', 'SCHEDULER_ARGS', 'platform-scheduler'],
    ['node-agent.env', 'NODE_AGENT_ARGS', 'platform-node-agent'],
    ['metrics-server.env', 'METRICS_SERVER_ARGS', 'platform-metrics-server'],
  ])('gives %s an option list its daemon accepts', (file, variable, program) => {
    const env = readFileSync(join(ROOT, 'deploy', 'systemd', file), 'utf8');
    const m = new RegExp(`^${variable}="([^"]*)"$`, 'm').exec(env);
    expect(m).not.toBeNull();
    const args = m![1]!.split(/\s+/).filter(Boolean);
    expect(flagErrors(program, args)).toEqual([]);
  });

  it.each([
    ['platform-apiserver.service', 'packages/apiserver/bin/platform-apiserver'],
    ['platform-controller-manager.service', 'packages/controller-manager/bin/platform-controller-manager'],
    ['platform-scheduler.service', 'packages/scheduler/bin/platform-scheduler'],
    ['platform-node-agent.service', 'packages/node-agent/bin/platform-node-agent'],
    ['platform-metrics-server.service', 'packages/metrics-server/bin/platform-metrics-server'],
    ['platform-up.service', 'packages/cluster/bin/platform'],
  ])('%s runs a program of this repository', (unit, bin) => {
    const text = readFileSync(join(ROOT, 'deploy', 'systemd', unit), 'utf8');
    const exec = /^ExecStart=\/usr\/bin\/node \/opt\/platform\/(\S+)/m.exec(text);
    expect(exec?.[1]).toBe(bin);
    expect(existsSync(join(ROOT, bin))).toBe(true);
  });

  const units = readdirSync(join(ROOT, 'deploy', 'systemd')).filter((n) => n.endsWith('.service'));
  const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  // Debian's systemd package provides it even where systemd is not PID 1; it warns (and exits 0) on unknown keys.
  (analyze.status === 0 ? it.each(units) : it.skip.each(units))('systemd-analyze verify accepts %s', (unit) => {
    const r = spawnSync('systemd-analyze', ['verify', join(ROOT, 'deploy', 'systemd', unit)], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
  if (analyze.status !== 0)
    console.log('systemd-analyze is not installed (apt-get install systemd): the unit verification is skipped');
});

it('builds an image whose default command is an installed program', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  expect(dockerfile).toMatch(/^RUN npm ci && npm prune --omit=dev$/m);
  const cmd = /^CMD \["([^"]+)"/m.exec(dockerfile)?.[1];
  expect(cmd).toBe('platform-apiserver');
  // npm links the bins of the workspaces into node_modules/.bin, which the image puts on PATH.
  expect(existsSync(join(ROOT, 'node_modules', '.bin', cmd!))).toBe(true);
});
