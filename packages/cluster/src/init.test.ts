import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { init } from './init';
import { metricsServerObjects } from './metrics-server';
import { clusterFiles } from './pki';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'platform-init-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The certificates of a PEM file, in order. */
function certs(file: string): X509Certificate[] {
  const pem = readFileSync(file, 'utf8');
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map(
    (c) => new X509Certificate(c),
  );
}

describe('platform init', () => {
  it("writes ECDSA credentials: the API servers' certificate issued by the cluster CA, followed by it", async () => {
    const written = await init({ dir, server: 'https://apiserver1:6443', sans: ['apiserver2'], nodes: ['node1'] });
    const f = clusterFiles(dir);
    expect([...written.keys()]).toEqual(
      expect.arrayContaining(['admin', 'controller-manager', 'scheduler', 'node-agent-node1', 'metrics-server']),
    );
    const [leaf, ca] = certs(f.caFile);
    const clusterCa = certs(f.clusterCa.certFile)[0]!;
    expect(ca?.fingerprint256).toBe(clusterCa.fingerprint256);
    expect(leaf!.verify(clusterCa.publicKey)).toBe(true);
    expect(leaf!.publicKey.asymmetricKeyType).toBe('ec');
    for (const host of ['apiserver1', 'apiserver2', 'localhost']) expect(leaf!.checkHost(host)).toBe(host);
    expect(leaf!.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(createPrivateKey(readFileSync(f.serviceAccountKey)).asymmetricKeyType).toBe('ec');
  });

  it("writes the metrics server's certificates, for the name the aggregation layer checks", () => {
    const f = clusterFiles(dir);
    const serving = certs(f.metricsServerServing.certFile)[0]!;
    expect(serving.checkHost('metrics-server.system.svc')).toBe('metrics-server.system.svc');
    expect(serving.checkHost('metrics-server')).toBe('metrics-server');
    expect(certs(f.metricsServerClient.certFile)[0]!.subject).toContain('CN=system:metrics-server');
    expect(certs(f.frontProxyClient.certFile)[0]!.subject).toContain('CN=front-proxy-client');
    const conf = readFileSync(join(dir, 'metrics-server.conf'), 'utf8');
    expect(conf).toContain(`client-certificate: ${f.metricsServerClient.certFile}`);
    expect(conf).toContain('server: https://apiserver1:6443');
  });

  it('keeps what exists when run again', async () => {
    const f = clusterFiles(dir);
    const files = [f.caFile, f.clusterCa.certFile, f.serviceAccountKey, f.metricsServerServing.certFile, f.tokenFile];
    const before = files.map((p) => readFileSync(p, 'utf8'));
    await init({ dir, server: 'https://apiserver1:6443', sans: ['apiserver2'], nodes: ['node1'] });
    expect(files.map((p) => readFileSync(p, 'utf8'))).toEqual(before);
  });
});

describe('metricsServerObjects', () => {
  const kinds = (objects: ReturnType<typeof metricsServerObjects>): string[] =>
    objects.map((o) => String(o.object.kind));

  it('points a Service and its Endpoints at an IP address, the APIService at the Service port', () => {
    const objects = metricsServerObjects(4443, 'CA', '10.0.0.5');
    expect(kinds(objects).slice(-3)).toEqual(['Service', 'Endpoints', 'APIService']);
    const endpoints = objects.find((o) => o.object.kind === 'Endpoints')!.object as unknown as {
      subsets: { addresses: { ip: string }[]; ports: { port: number }[] }[];
    };
    expect(endpoints.subsets[0]!.addresses[0]!.ip).toBe('10.0.0.5');
    expect(endpoints.subsets[0]!.ports[0]!.port).toBe(4443);
    expect((objects.at(-1)!.object.spec as { service: { port: number } }).service.port).toBe(443);
  });

  it('makes the Service an ExternalName for a DNS name, with no Endpoints, and the APIService at its port', () => {
    const objects = metricsServerObjects(4443, 'CA', 'metrics-server');
    expect(kinds(objects)).not.toContain('Endpoints');
    const service = objects.find((o) => o.object.kind === 'Service')!.object.spec as {
      type: string;
      externalName: string;
    };
    expect(service).toMatchObject({ type: 'ExternalName', externalName: 'metrics-server' });
    expect((objects.at(-1)!.object.spec as { service: { port: number } }).service.port).toBe(4443);
  });
});
