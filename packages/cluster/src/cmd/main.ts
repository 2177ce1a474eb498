/**
 * `platform` (what `npm start` runs as `platform up`): a whole local cluster on this machine, and the commands that
 * look after it — `status`, `down` (for a cluster started with `up --detach`) and `logs <daemon>`.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';

import { init } from '../init';
import { candidacyOf, leaseHolders, rssOf } from '../inspect';
import { metricsServerObjects, RegistrationError, registerMetricsServer } from '../metrics-server';
import { clusterFiles } from '../pki';
import { alive, type ClusterState, readState } from '../state';
import { probe } from '../supervisor';
import { DAEMON_KINDS, defaultNodeName, up, type UpOptions } from '../up';

function parsePort(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > 65535)
    throw new InvalidArgumentError('must be a port number between 1 and 65535');
  return n;
}

function collect(v: string, acc: string[]): string[] {
  return [...acc, v];
}

function parseCount(v: string): number {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a whole number');
  return Number(v);
}

const IO = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
};

/** Runs `platform` with `argv`; resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command('platform').description('A local cluster of the platform on this machine.');
  let code = 0;
  const dirOption = (): Option =>
    new Option(
      '--dir <path>',
      'state directory: the store, certificates, tokens, client configurations and logs',
    ).default('.platform');
  const upCommand = program
    .command('up')
    .description(
      'start the API server, the controller manager, the scheduler and a node agent, each its own process; Ctrl-C stops them',
    )
    .addOption(dirOption())
    .option('--port <port>', 'secure port of the (first) API server', parsePort, 6443)
    .option('--bind-address <ip>', 'address the API servers listen on', '127.0.0.1')
    .addOption(
      new Option('--store <store>', 'the store: the embedded one, or an etcd cluster')
        .choices(['sqlite', 'etcd'])
        .default('sqlite'),
    )
    .option(
      '--servers <n>',
      'API servers (and etcd members, controller managers, schedulers); more than 1 needs --store etcd',
      parseCount,
      1,
    )
    .option(
      '--simulate-nodes <n>',
      'also run N simulated nodes (no real containers) in one more node agent',
      parseCount,
      0,
    )
    .option('--node-name <name>', "the name of this machine's node", defaultNodeName())
    .addOption(
      new Option(
        '--container-runtime <runtime>',
        "the node agent's runtime: remote (containerd) when a socket is given or found, else builtin",
      )
        .choices(['auto', 'builtin', 'remote'])
        .default('auto'),
    )
    .option('--container-runtime-endpoint <endpoint>', 'the CRI socket (unix:///run/containerd/containerd.sock)')
    .option('--detach', 'start in the background, print the summary and return (stop with `platform down`)', false)
    .option(
      '--random-ports',
      "the daemons' own ports (etcd, controller managers, schedulers, node agents) picked by the OS instead of their defaults (several clusters on one machine)",
      false,
    )
    .option(
      '--keep-down <daemon>',
      'this daemon stays down when it exits (repeatable; failure drills); the exit of the only API server still stops the cluster',
      collect,
      [],
    );
  for (const kind of DAEMON_KINDS)
    upCommand.option(
      `--${kind}-arg <flag>`,
      `one more flag for every ${kind} (repeatable; after the launcher's own, so it wins), e.g. --${kind}-arg=--v=4`,
      collect,
      [],
    );
  upCommand.action(async (o: UpOptions & { detach: boolean } & Record<string, unknown>) => {
    // Commander names `--controller-manager-arg`'s value `controllerManagerArg`.
    const extraArgs = Object.fromEntries(
      DAEMON_KINDS.map((k) => [k, o[`${k.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())}Arg`] as string[]]),
    );
    const options: UpOptions = { ...o, dir: resolve(o.dir), extraArgs };
    code = o.detach ? await detach(options, argv) : await up(options, IO);
  });
  program
    .command('status')
    .description('one line per daemon of the running cluster, with its health')
    .addOption(dirOption())
    .action(async (o: { dir: string }) => {
      code = await status(resolve(o.dir));
    });
  program
    .command('down')
    .description(
      'stop the cluster running from this state directory (started with `up --detach`, or in another terminal)',
    )
    .addOption(dirOption())
    .action(async (o: { dir: string }) => {
      code = await down(resolve(o.dir));
    });
  program
    .command('logs')
    .description("print a daemon's log and follow it (Ctrl-C stops)")
    .argument('<daemon>', 'apiserver, controller-manager, scheduler, node-agent, ... (as `platform status` names them)')
    .addOption(dirOption())
    .option('--no-follow', 'print the log and return')
    .action(async (daemon: string, o: { dir: string; follow: boolean }) => {
      code = await logs(resolve(o.dir), daemon, o.follow);
    });
  program
    .command('init')
    .description(
      'write the credentials of a cluster whose daemons run elsewhere (docker compose, systemd): certificates, tokens and a client configuration per daemon',
    )
    .addOption(dirOption())
    .requiredOption('--server <url>', 'the API server URL the client configurations name (https://host:port)')
    .option('--san <name>', 'another host name of the API servers (repeatable)', collect, [])
    .option('--node <name>', 'a node that gets a system:node:<name> identity (repeatable)', collect, [])
    .action(async (o: { dir: string; server: string; san: string[]; node: string[] }) => {
      try {
        const written = await init({ dir: resolve(o.dir), server: o.server, sans: o.san, nodes: o.node });
        IO.out(`platform: wrote the credentials of ${o.server} in ${resolve(o.dir)}:`);
        for (const [name, path] of written) IO.out(`  ${name.padEnd(22)} ${path}`);
      } catch (err) {
        IO.err(`platform: ${(err as Error).message}`);
        code = 1;
      }
    });
  program
    .command('register-metrics-server')
    .description(
      'register a metrics server that runs elsewhere (docker compose, systemd) in the API: its roles, its Service and the APIService v1beta1.metrics.platform, as the admin of `platform init`',
    )
    .addOption(dirOption())
    .requiredOption('--server <url>', 'the API server URL (https://host:port)')
    .requiredOption(
      '--address <address>',
      "the metrics server's address: an IP (a Service with Endpoints there, for --enable-aggregator-routing) or a DNS name (an ExternalName Service)",
    )
    .option('--port <port>', "the metrics server's --secure-port", parsePort, 4443)
    .action(async (o: { dir: string; server: string; address: string; port: number }) => {
      code = await registerElsewhere(resolve(o.dir), o.server, o.address, o.port);
    });
  program
    .command('probe')
    .description('exit 0 when a GET of the URL answers 200 (a health check for containers; TLS is not verified)')
    .argument('<url>', 'e.g. https://localhost:6443/readyz')
    .action(async (url: string) => {
      code = (await probe(url)) ? 0 : 1;
    });
  program.exitOverride();
  program.configureOutput({ outputError: (s, write) => write(`platform: ${s.replace(/^error: /, '')}`) });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    const e = err as { code?: string; exitCode?: number };
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help' || e.code === 'commander.version') return 0;
    // Commander has printed its own errors; anything else failed in a command and is said here, not swallowed.
    if (!(err instanceof CommanderError)) IO.err(`platform: ${(err as Error)?.stack ?? String(err)}`);
    return e.exitCode ?? 1;
  }
  return code;
}

/**
 * `register-metrics-server`: the objects of metrics-server.ts for a metrics server at `address`:`port`, written as the
 * admin of the credentials in `dir`; retried for a minute while the API server does not answer.
 */
async function registerElsewhere(dir: string, server: string, address: string, port: number): Promise<number> {
  const f = clusterFiles(dir);
  let token: string, ca: string, clusterCa: string;
  try {
    token = readFileSync(f.tokenFile, 'utf8').trim();
    ca = readFileSync(f.caFile, 'utf8');
    clusterCa = readFileSync(f.clusterCa.certFile, 'utf8');
  } catch (err) {
    IO.err(`platform: ${dir} holds no credentials of \`platform init\`: ${(err as Error).message}`);
    return 1;
  }
  const objects = metricsServerObjects(port, clusterCa, address);
  for (let attempt = 1; ; attempt++) {
    try {
      await registerMetricsServer(server, token, ca, objects);
      IO.out(`platform: registered the metrics server at ${address}:${port} in ${server}`);
      return 0;
    } catch (err) {
      const refused = err instanceof RegistrationError && err.status >= 400 && err.status < 500 && err.status !== 429;
      if (refused || attempt >= 30) {
        IO.err(`platform: could not register the metrics server: ${(err as Error).message}`);
        return 1;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

/** `up --detach`: the launcher again, in the background, logging to `logs/platform.log`; returns once it is ready. */
async function detach(o: UpOptions, argv: readonly string[]): Promise<number> {
  const f = clusterFiles(o.dir);
  const running = readState(f.stateFile);
  if (running) {
    IO.err(
      `platform: ${o.dir} belongs to a running cluster (launcher pid ${running.pid}); see \`platform status --dir ${o.dir}\``,
    );
    return 1;
  }
  mkdirSync(f.logDir, { recursive: true });
  const logFile = `${f.logDir}/platform.log`;
  const fd = openSync(logFile, 'a');
  const args = argv.filter((a) => a !== '--detach');
  const child = spawn(process.execPath, [process.argv[1]!, ...args, `--dir=${o.dir}`], {
    stdio: ['ignore', fd, fd],
    detached: true,
  });
  closeSync(fd);
  let exited: number | null | undefined;
  child.on('exit', (c) => (exited = c ?? 1));
  child.unref();
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    const s = readStateFile(f.stateFile);
    if (s && s.pid === child.pid && s.phase === 'running') {
      IO.out(s.summary ?? 'platform is running.');
      IO.out(`Stop it with: platform down --dir ${o.dir}  (launcher log: ${logFile})`);
      return 0;
    }
    if (exited !== undefined) {
      IO.err(
        `platform: the cluster did not start:\n${readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n')}`,
      );
      return exited || 1;
    }
    if (Date.now() > deadline) {
      IO.err(`platform: the cluster is still starting after 10 minutes; see ${logFile}`);
      return 1;
    }
  }
}

function readStateFile(file: string): ClusterState | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

/**
 * One line per daemon: its process, health, resident memory, and (leader-elected daemons) `leader` or `standby`;
 * exit code 0 when every daemon is healthy.
 */
async function status(dir: string): Promise<number> {
  const f = clusterFiles(dir);
  const s = readState(f.stateFile);
  if (!s) {
    IO.err(`platform: no cluster is running in ${dir}`);
    return 1;
  }
  IO.out(`cluster in ${dir}: ${s.phase} (launcher pid ${s.pid})`);
  const candidacies = new Map(s.daemons.map((d) => [d.name, candidacyOf(d.log)]));
  const leases = [...candidacies.values()].flatMap((c) => (c ? [c.lease] : []));
  const holders = leases.length
    ? await leaseHolders(
        leases,
        s.daemons.filter((d) => d.name.startsWith('apiserver') && d.detail).map((d) => d.detail!),
        readFileSync(f.tokenFile, 'utf8').trim(),
        readFileSync(f.caFile, 'utf8'),
      )
    : new Map<string, string>();
  const rows = await Promise.all(
    s.daemons.map(async (d) => {
      const up = d.pid !== undefined && alive(d.pid);
      const health = !up ? 'not running' : !d.health || (await probe(d.health)) ? 'healthy' : 'unhealthy';
      const rss = up ? rssOf(d.pid!) : undefined;
      const c = candidacies.get(d.name);
      const role = !c || !up ? '' : holders.get(c.lease) === c.identity ? 'leader' : 'standby';
      return [
        d.name,
        d.pid !== undefined ? `pid ${d.pid}` : '-',
        health,
        rss === undefined ? '' : `rss ${Math.round(rss / 2 ** 20)} MiB`,
        role,
        d.detail ?? '',
      ];
    }),
  );
  const widths = [0, 1, 2, 3, 4].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows)
    IO.out(
      r
        .map((c, i) => (i < widths.length ? c.padEnd(widths[i]!) : c))
        .join('  ')
        .trimEnd(),
    );
  return rows.every((r) => r[2] === 'healthy') ? 0 : 1;
}

async function down(dir: string): Promise<number> {
  const s = readState(clusterFiles(dir).stateFile);
  if (!s) {
    IO.out(`platform: no cluster is running in ${dir}`);
    return 0;
  }
  process.kill(s.pid, 'SIGTERM');
  const deadline = Date.now() + 120_000;
  while (alive(s.pid)) {
    if (Date.now() > deadline) {
      IO.err(`platform: the launcher (pid ${s.pid}) is still stopping after 2 minutes`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  IO.out('platform: stopped.');
  return 0;
}

async function logs(dir: string, daemon: string, follow: boolean): Promise<number> {
  const f = clusterFiles(dir);
  const file = `${f.logDir}/${daemon}.log`;
  if (!existsSync(file)) {
    const known = existsSync(f.logDir)
      ? readdirSync(f.logDir)
          .filter((n) => n.endsWith('.log'))
          .map((n) => n.slice(0, -4))
      : [];
    IO.err(
      `platform: no log of ${JSON.stringify(daemon)} in ${f.logDir}${known.length ? `; there are: ${known.join(', ')}` : ''}`,
    );
    return 1;
  }
  let offset = 0;
  const pump = (): void => {
    const size = statSync(file).size;
    if (size < offset) offset = 0; // truncated
    if (size === offset) return;
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(size - offset);
      readSync(fd, buf, 0, buf.length, offset);
      process.stdout.write(buf);
      offset = size;
    } finally {
      closeSync(fd);
    }
  };
  pump();
  if (!follow) return 0;
  await new Promise<void>((done) => {
    const timer = setInterval(pump, 250);
    const end = (): void => {
      clearInterval(timer);
      done();
    };
    process.once('SIGINT', end);
    process.once('SIGTERM', end);
  });
  return 0;
}
