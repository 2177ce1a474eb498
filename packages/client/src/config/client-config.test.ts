import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { isClientConfigError, loadClientConfig, parseClientConfig } from './client-config';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const b64 = (s: string): string => Buffer.from(s).toString('base64');

function doc(cluster: string, user: string, extra = ''): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
${cluster}
users:
- name: u
  user:
${user}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: team-a}
current-context: ctx
${extra}`;
}

describe('parseClientConfig', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'clientconfig-'));
    writeFileSync(join(dir, 'ca.crt'), PEM);
    writeFileSync(join(dir, 'client.crt'), PEM);
    writeFileSync(join(dir, 'client.key'), '-----BEGIN PRIVATE KEY-----\nX\n-----END PRIVATE KEY-----\n');
    writeFileSync(join(dir, 'token'), 'file-token\n');
  });

  it('reads inline data, a token, and the context namespace', () => {
    const c = parseClientConfig(
      doc(`    server: https://10.0.0.1:6443\n    certificate-authority-data: ${b64(PEM)}`, '    token: abc'),
      join(dir, 'x.conf'),
    );
    expect(c.server).toBe('https://10.0.0.1:6443');
    expect(c.ca?.toString()).toBe(PEM);
    expect(c.token).toBe('abc');
    expect(c.namespace).toBe('team-a');
  });

  it('resolves file paths relative to the file; a client certificate and key; a token file', () => {
    const c = parseClientConfig(
      doc(
        '    server: https://h:6443\n    certificate-authority: ca.crt',
        '    client-certificate: client.crt\n    client-key: client.key\n    tokenFile: token',
      ),
      join(dir, 'x.conf'),
    );
    expect(c.ca?.toString()).toBe(PEM);
    expect(c.cert?.toString()).toBe(PEM);
    expect(c.key?.toString()).toContain('PRIVATE KEY');
    expect(c.tokenFile).toBe(join(dir, 'token'));
  });

  it('lets --master override the server', () => {
    const c = parseClientConfig(doc('    server: https://h:6443', '    token: t'), join(dir, 'x.conf'), {
      master: '127.0.0.1:7443',
    });
    expect(c.server).toBe('https://127.0.0.1:7443');
  });

  it.each([
    ['malformed YAML', 'clusters: [', /x\.conf: not valid YAML at line/],
    [
      'a list that is a string',
      'clusters: nope\ncurrent-context: ctx',
      /x\.conf: clusters: must be a list, got string/,
    ],
    [
      'a server of the wrong type',
      doc('    server: 42', '    token: t'),
      /x\.conf: clusters\[0\]\.cluster\.server: must be a string, got number/,
    ],
    [
      'a bad server URL',
      doc('    server: "ftp://h"', '    token: t'),
      /clusters\[0\]\.cluster\.server: server URL must be http or https/,
    ],
    [
      'a missing server',
      doc('    insecure-skip-tls-verify: true', '    token: t'),
      /clusters\[0\]\.cluster\.server: is required/,
    ],
    [
      'CA data that is not base64',
      doc('    server: https://h\n    certificate-authority-data: "!!!"', '    token: t'),
      /clusters\[0\]\.cluster\.certificate-authority-data: is not valid base64/,
    ],
    [
      'a CA file that does not exist',
      doc('    server: https://h\n    certificate-authority: nope.crt', '    token: t'),
      /clusters\[0\]\.cluster\.certificate-authority: cannot read .*nope\.crt: ENOENT/,
    ],
    [
      'a certificate without a key',
      doc('    server: https://h', '    client-certificate: client.crt'),
      /users\[0\]\.user\.client-key: is required when a client certificate is given/,
    ],
    [
      'a context naming a missing user',
      doc('    server: https://h', '    token: t').replace('user: u,', 'user: ghost,'),
      /contexts\[0\]\.context\.user: no user named "ghost"/,
    ],
    [
      'a current-context that does not exist',
      doc('    server: https://h', '    token: t').replace('current-context: ctx', 'current-context: other'),
      /current-context: no context named "other"/,
    ],
    ['a wrong kind', `kind: Pod\n`, /x\.conf: kind: must be "Config", got "Pod"/],
    [
      'a duplicate cluster name',
      doc('    server: https://h', '    token: t').replace('contexts:', '- name: u\n  user: {}\ncontexts:'),
      /users\[1\]\.name: duplicate name "u"/,
    ],
    [
      'an exec plugin',
      doc('    server: https://h', '    exec: {command: x}'),
      /users\[0\]\.user\.exec: is not supported/,
    ],
  ])('names the field of %s', (_what, text, message) => {
    let err: unknown;
    try {
      parseClientConfig(text, join(dir, 'x.conf'));
    } catch (e) {
      err = e;
    }
    expect(isClientConfigError(err)).toBe(true);
    expect((err as Error).message).toMatch(message);
  });

  it('loads from --clientconfig, or --master alone, and names a missing file', () => {
    const path = join(dir, 'ok.conf');
    writeFileSync(path, doc('    server: https://h:1', '    token: t'));
    expect(loadClientConfig({ clientConfig: path }).server).toBe('https://h:1');
    expect(loadClientConfig({ master: 'https://m:2' })).toEqual({ server: 'https://m:2' });
    expect(() => loadClientConfig({})).toThrow(/neither --clientconfig nor --master/);
    expect(() => loadClientConfig({ clientConfig: join(dir, 'missing.conf') })).toThrow(
      /missing\.conf: cannot read: ENOENT/,
    );
  });
});
