import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type PeerCertificate, type TLSSocket, connect as tlsConnect } from 'node:tls';

import { defaultLoggingConfig } from '../logging/config';
import { createLogging } from '../logging/create-logging';
import { MetricsRegistry } from '../metrics/registry';
import { type SecureServingInfo, SecureServingOptions } from '../options/secure-serving-options';
import { generateSelfSignedCertKey, parseCertKeyPair } from '../tls/cert-key';
import { SniCertificateMap } from '../tls/sni';

import { SecureServer } from './secure-server';

class Sink extends Writable {
  text = '';
  override _write(c: Buffer, _e: BufferEncoding, cb: () => void): void {
    this.text += c.toString();
    cb();
  }
}

function quietLogger() {
  const sink = new Sink();
  const logging = createLogging({ config: { ...defaultLoggingConfig(), skipHeaders: true }, stderr: sink });
  return { sink, logging, log: logging.logger };
}

interface Reply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  cert: PeerCertificate;
}

function get(
  port: number,
  path: string,
  o: { ca: string; servername?: string; host?: string; agent?: false } = { ca: '' },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: o.host ?? '127.0.0.1', port, path, ca: o.ca, servername: o.servername ?? '', agent: false },
      (res) => {
        const cert = (res.socket as TLSSocket).getPeerCertificate();
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers, cert }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function caOf(chainPem: string): string {
  return chainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)![1]!;
}

async function servingFromOptions(certDir: string): Promise<SecureServingInfo> {
  const opts = new SecureServingOptions({ port: 6443, certDir, pairName: 'apiserver', allowDisable: false });
  opts.bindAddress = '127.0.0.1';
  expect(opts.validate()).toEqual([]);
  const config: { secureServing?: SecureServingInfo } = {};
  await opts.applyTo(config);
  // Port 0: let the OS choose (the options forbid 0 for the API server; tests bind ephemeral ports).
  return { ...config.secureServing!, port: 0 };
}

describe('SecureServer', () => {
  const servers: SecureServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.shutdown()));
  });

  function make(serving: SecureServingInfo, extra: Partial<ConstructorParameters<typeof SecureServer>[0]> = {}) {
    const { log, sink } = quietLogger();
    const server = new SecureServer({
      serving,
      logger: log,
      metrics: new MetricsRegistry(undefined, { collectDefaultMetrics: false }),
      ...extra,
    });
    servers.push(server);
    return { server, sink };
  }

  it('generates a self-signed CA and serving certificate in --cert-dir and reuses them after a restart', async () => {
    const certDir = join(mkdtempSync(join(tmpdir(), 'certs-')), 'nested');
    const first = await servingFromOptions(certDir);
    expect(first.generatedSelfSigned).toBe(true);
    const certPem = readFileSync(join(certDir, 'apiserver.crt'), 'utf8');
    expect(certPem.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(statSync(join(certDir, 'apiserver.key')).mode & 0o777).toBe(0o600);
    expect(first.cert.leaf.subjectAltName).toContain('DNS:localhost');
    expect(first.cert.leaf.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(first.cert.leaf.subject).toMatch(/^CN=127\.0\.0\.1@\d+$/);

    const a = make(first).server;
    const { port } = await a.start();
    const r1 = await get(port, '/healthz', { ca: caOf(certPem) });
    expect(r1.status).toBe(200);
    expect(r1.body).toBe('ok');
    const fingerprint = r1.cert.fingerprint256;
    await a.shutdown();

    // Restart: same files, same certificate, verified with the same CA.
    const second = await servingFromOptions(certDir);
    expect(second.generatedSelfSigned).toBe(false);
    expect(readFileSync(join(certDir, 'apiserver.crt'), 'utf8')).toBe(certPem);
    const b = make(second).server;
    const { port: port2 } = await b.start();
    const r2 = await get(port2, '/livez', { ca: caOf(certPem) });
    expect(r2.status).toBe(200);
    expect(r2.cert.fingerprint256).toBe(fingerprint);
  });

  describe('health endpoints', () => {
    let ca = '';
    let serving: SecureServingInfo;
    beforeAll(async () => {
      const { certPem, keyPem } = await generateSelfSignedCertKey({ host: '127.0.0.1' });
      ca = caOf(certPem);
      serving = {
        bindAddress: '127.0.0.1',
        port: 0,
        cert: parseCertKeyPair(certPem, keyPem, 'test'),
        sni: new SniCertificateMap([]),
        permitAddressSharing: false,
        permitPortSharing: false,
        http2MaxStreamsPerConnection: 0,
        generatedSelfSigned: true,
      };
    });

    async function started() {
      const { server } = make(serving);
      let storeOk = true;
      server.health.addHealthChecks({
        name: 'store',
        check: async () => {
          if (!storeOk) throw new Error('etcd unreachable');
        },
      });
      let release!: () => void;
      server.addPostStartHook('start-informers', () => new Promise<void>((r) => (release = r)));
      const { port } = await server.start();
      return { server, port, setStore: (ok: boolean) => (storeOk = ok), release: () => release() };
    }

    it('answers exactly as Kubernetes: ok, verbose lists, failures withheld, post-start hooks', async () => {
      const { port, setStore, release } = await started();
      const g = (p: string) => get(port, p, { ca });

      let r = await g('/readyz?verbose');
      expect(r.status).toBe(500);
      expect(r.body).toBe(
        '[+]ping ok\n[+]store ok\n[-]poststarthook/start-informers failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n',
      );
      expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(r.headers['x-content-type-options']).toBe('nosniff');
      // Failures are verbose even without ?verbose.
      r = await g('/livez');
      expect(r.body).toBe(
        '[+]ping ok\n[+]store ok\n[-]poststarthook/start-informers failed: reason withheld\nlivez check failed\n',
      );

      release();
      await new Promise((r2) => setImmediate(r2));
      r = await g('/readyz');
      expect([r.status, r.body]).toEqual([200, 'ok']);
      r = await g('/healthz?verbose');
      expect([r.status, r.body]).toEqual([
        200,
        '[+]ping ok\n[+]store ok\n[+]poststarthook/start-informers ok\nhealthz check passed\n',
      ]);

      setStore(false);
      r = await g('/healthz?verbose');
      expect(r.status).toBe(500);
      expect(r.body).toBe(
        '[+]ping ok\n[-]store failed: reason withheld\n[+]poststarthook/start-informers ok\nhealthz check failed\n',
      );

      r = await g('/readyz?verbose&exclude=store&exclude=nope&exclude=alsonot');
      expect(r.status).toBe(200);
      expect(r.body).toBe(
        '[+]ping ok\n[+]store excluded: ok\n[+]poststarthook/start-informers ok\n[+]shutdown ok\n' +
          'warn: some health checks cannot be excluded: no matches for "alsonot","nope"\nreadyz check passed\n',
      );
      r = await g('/readyz?exclude=store');
      expect([r.status, r.body]).toEqual([200, 'ok']);
    });

    it('serves individual checks and 404 for unknown ones', async () => {
      const { port, setStore, release } = await started();
      const g = (p: string) => get(port, p, { ca });
      expect((await g('/livez/ping')).body).toBe('ok');
      let r = await g('/readyz/poststarthook/start-informers');
      expect([r.status, r.body]).toEqual([500, 'internal server error: not finished\n']);
      release();
      await new Promise((r2) => setImmediate(r2));
      expect((await g('/readyz/poststarthook/start-informers')).status).toBe(200);
      setStore(false);
      r = await g('/livez/store');
      expect([r.status, r.body]).toEqual([500, 'internal server error: etcd unreachable\n']);
      r = await g('/livez/nosuch');
      expect([r.status, r.body]).toEqual([404, '404 page not found\n']);
      expect((await g('/livez/shutdown')).status).toBe(404);
    });

    it('serves /version, /metrics with the daemon metrics, and routes added before start', async () => {
      const { server } = make(serving);
      const c = server.metrics.counter({ name: 'apiserver_request_total', help: 'Requests.', labelNames: ['verb'] });
      c.inc({ verb: 'GET' }, 2);
      server.app.get('/api', (_req, res) => {
        res.json({ kind: 'APIVersions' });
      });
      const { port } = await server.start();
      const v = await get(port, '/version', { ca });
      expect(JSON.parse(v.body)).toMatchObject({ major: '1', minor: '21', gitVersion: 'v1.21.0+platform.0.1.0' });
      const m = await get(port, '/metrics', { ca });
      expect(m.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(m.body).toContain('# TYPE apiserver_request_total counter\napiserver_request_total{verb="GET"} 2\n');
      expect(JSON.parse((await get(port, '/api', { ca })).body)).toEqual({ kind: 'APIVersions' });
      expect((await get(port, '/debug/pprof/', { ca })).status).toBe(404);
    });

    it('serves CPU profiles and heap snapshots with --profiling', async () => {
      const { server } = make(serving, {
        enableProfiling: true,
        delay: (_ms, _s) => new Promise((r) => setTimeout(r, 20)),
      });
      const { port } = await server.start();
      const idx = await get(port, '/debug/pprof/', { ca });
      expect(idx.body).toContain('profile');
      const bad = await get(port, '/debug/pprof/profile?seconds=abc', { ca });
      expect(bad.status).toBe(400);
      const prof = await get(port, '/debug/pprof/profile?seconds=1', { ca });
      expect(prof.status).toBe(200);
      const profile = JSON.parse(prof.body) as { nodes: unknown[]; startTime: number; endTime: number };
      expect(profile.nodes.length).toBeGreaterThan(0);
      expect(profile.endTime).toBeGreaterThan(profile.startTime);
    });

    it('heap snapshot is a V8 snapshot', async () => {
      const { server } = make(serving, { enableProfiling: true });
      const { port } = await server.start();
      const heap = await get(port, '/debug/pprof/heap', { ca });
      expect(heap.status).toBe(200);
      expect(heap.headers['content-disposition']).toContain('heap.heapsnapshot');
      // The snapshot is of this Jest worker, which may hold a large heap after other test files: it can take a
      // minute to write, so only its head is checked (parsing it whole would cost as much again).
      expect(heap.body.slice(0, 200)).toMatch(/^\{"snapshot":\{"meta":\{"node_fields":\[[^\]]*"name"/);
    }, 300_000);

    it('shuts down gracefully: readyz fails, in-flight requests drain, the signal aborts, hooks run in reverse', async () => {
      const { server } = make(serving);
      const order: string[] = [];
      server.addShutdownHook('first', () => void order.push('first'));
      server.addShutdownHook('second', () => void order.push('second'));
      let releaseSlow!: () => void;
      let slowReached!: () => void;
      let watchReached!: () => void;
      const reached = Promise.all([
        new Promise<void>((r) => (slowReached = r)),
        new Promise<void>((r) => (watchReached = r)),
      ]);
      server.app.get('/slow', (_req, res) => {
        void new Promise<void>((r) => (releaseSlow = r)).then(() => res.send('done'));
        slowReached();
      });
      server.app.get('/watch', (_req, res) => {
        res.write('streaming\n');
        server.signal.addEventListener('abort', () => res.end('bye\n'));
        watchReached();
      });
      const { port } = await server.start();
      const slow = get(port, '/slow', { ca });
      const watch = get(port, '/watch', { ca });
      await reached;
      const done = server.shutdown();
      expect(server.shuttingDown).toBe(true);
      // The signal ends the long-running request; the ordinary one keeps the drain (and the hooks) waiting.
      expect((await watch).body).toBe('streaming\nbye\n');
      expect(server.signal.aborted).toBe(true);
      expect(order).toEqual([]);
      releaseSlow();
      expect((await slow).body).toBe('done');
      await done;
      expect(order).toEqual(['second', 'first']);
      await expect(get(port, '/healthz', { ca })).rejects.toThrow(/ECONNREFUSED/);
    });

    it('counts unfinished post-start hooks as live during --livez-grace-period, not as ready', async () => {
      let t = 1_000_000;
      const { server } = make(serving, { livezGracePeriodMs: 8000, now: () => t });
      server.addPostStartHook('slow-hook', () => new Promise<void>(() => {}));
      const { port } = await server.start();
      expect((await get(port, '/livez?verbose', { ca })).body).toBe(
        '[+]ping ok\n[+]poststarthook/slow-hook ok\nlivez check passed\n',
      );
      expect((await get(port, '/readyz', { ca })).status).toBe(500);
      t += 8000;
      const r = await get(port, '/livez', { ca });
      expect([r.status, r.body]).toEqual([
        500,
        '[+]ping ok\n[-]poststarthook/slow-hook failed: reason withheld\nlivez check failed\n',
      ]);
    });

    it('fails to start on a port in use, naming the address', async () => {
      const { server: a } = make(serving);
      const { port } = await a.start();
      const { server: b } = make({ ...serving, port });
      await expect(b.start()).rejects.toThrow(
        new RegExp(`^failed to listen on 127\\.0\\.0\\.1:${port}: listen EADDRINUSE`),
      );
    });

    it('shuts down on SIGTERM or SIGINT and exits on a second signal', async () => {
      const { server } = make(serving);
      await server.start();
      const signals = new EventEmitter();
      let exits = 0;
      const remove = server.installSignalHandlers(() => exits++, signals);
      signals.emit('SIGTERM', 'SIGTERM');
      expect(server.shuttingDown).toBe(true);
      expect(exits).toBe(0);
      signals.emit('SIGINT', 'SIGINT');
      expect(exits).toBe(1);
      remove();
      expect(signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT')).toBe(0);
      await server.shutdown();
    });

    it('runs the log check by flushing the logs', async () => {
      let broken = false;
      const { server } = make(serving, {
        logging: {
          flush: () => {
            if (broken) throw new Error('ENOSPC: no space left on device');
          },
        },
      });
      const { port } = await server.start();
      expect((await get(port, '/healthz?verbose', { ca })).body).toBe('[+]ping ok\n[+]log ok\nhealthz check passed\n');
      broken = true;
      const r = await get(port, '/livez/log', { ca });
      expect([r.status, r.body]).toEqual([500, 'internal server error: ENOSPC: no space left on device\n']);
    });

    it('runs pre-shutdown hooks at once, still serving, and closes the listener only after them', async () => {
      let endHook!: () => void;
      let hookStarted!: () => void;
      const started = new Promise<void>((r) => (hookStarted = r));
      const { server } = make(serving);
      const order: string[] = [];
      server.addPreShutdownHook('leave-endpoints', async () => {
        order.push('pre-shutdown');
        hookStarted();
        await new Promise<void>((r) => (endHook = r));
      });
      server.addShutdownHook('storage', () => void order.push('shutdown'));
      const { port } = await server.start();
      const done = server.shutdown();
      await started;
      // The hook has not finished: the server still answers, /readyz already fails.
      expect((await get(port, '/livez', { ca })).status).toBe(200);
      expect((await get(port, '/readyz', { ca })).status).toBe(500);
      expect(order).toEqual(['pre-shutdown']);
      endHook();
      await done;
      expect(order).toEqual(['pre-shutdown', 'shutdown']);
      await expect(get(port, '/healthz', { ca })).rejects.toThrow(/ECONNREFUSED/);
    });

    it('fails /readyz during the shutdown delay while /livez still passes', async () => {
      let endDelay!: () => void;
      const { server } = make(serving, {
        shutdownDelayMs: 70_000,
        delay: (ms) => (ms === 70_000 ? new Promise<void>((r) => (endDelay = r)) : Promise.resolve()),
      });
      const { port } = await server.start();
      const done = server.shutdown();
      const ready = await get(port, '/readyz?verbose', { ca });
      expect(ready.status).toBe(500);
      expect(ready.body).toBe('[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n');
      expect((await get(port, '/livez', { ca })).status).toBe(200);
      endDelay();
      await done;
    });
  });

  it('selects SNI certificates over real TLS handshakes, by name and by local IP', async () => {
    const gen = async (host: string, dns: string[] = []) => {
      const { certPem, keyPem } = await generateSelfSignedCertKey({ host, alternateDNS: dns });
      return { pair: parseCertKeyPair(certPem, keyPem, host), ca: caOf(certPem) };
    };
    const def = await gen('default.example');
    const foo = await gen('foo.example', ['*.foo.example']);
    const ipCert = await gen('ip-cert.example');
    const serving: SecureServingInfo = {
      bindAddress: '127.0.0.1',
      port: 0,
      cert: def.pair,
      sni: new SniCertificateMap([
        { pair: foo.pair, names: [] },
        { pair: ipCert.pair, names: ['127.0.0.1'] },
      ]),
      permitAddressSharing: false,
      permitPortSharing: false,
      http2MaxStreamsPerConnection: 0,
      generatedSelfSigned: false,
    };
    const { server } = make(serving);
    const { port } = await server.start();
    const cn = (r: Reply) => r.cert.subject.CN;
    const probe = (servername?: string) =>
      new Promise<string>((resolve, reject) => {
        const s = tlsConnect(
          { host: '127.0.0.1', port, servername: servername ?? '', rejectUnauthorized: false },
          () => {
            resolve(String(s.getPeerCertificate().subject.CN));
            s.end();
          },
        );
        s.on('error', reject);
      });
    expect(await probe('a.foo.example')).toMatch(/^foo\.example@/);
    expect(await probe('other.example')).toMatch(/^default\.example@/);
    expect(await probe()).toMatch(/^ip-cert\.example@/);
    expect(cn(await get(port, '/healthz', { ca: foo.ca, servername: 'a.foo.example' }))).toMatch(/^foo\.example@/);
    expect(cn(await get(port, '/healthz', { ca: def.ca, servername: 'default.example' }))).toMatch(
      /^default\.example@/,
    );
    // No server name (connected by IP): the certificate named for 127.0.0.1.
    expect(cn(await get(port, '/healthz', { ca: ipCert.ca }))).toMatch(/^ip-cert\.example@/);
  });
});
