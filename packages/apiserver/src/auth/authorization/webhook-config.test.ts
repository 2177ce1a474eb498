import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseWebhookConfig } from './webhook-config';

describe('parseWebhookConfig', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'webhook-config-'));
    writeFileSync(join(dir, 'ca.pem'), 'CA');
    writeFileSync(join(dir, 'token'), 'from-file\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes the current context, reading files relative to the configuration', () => {
    const c = parseWebhookConfig(
      [
        'clusters:',
        '- {name: other, cluster: {server: "https://other"}}',
        '- {name: mine, cluster: {server: "https://127.0.0.1:8443/authz", certificate-authority: ca.pem, tls-server-name: authz.local}}',
        'users:',
        '- {name: me, user: {tokenFile: token}}',
        'contexts:',
        '- {name: c, context: {cluster: mine, user: me}}',
        'current-context: c',
      ].join('\n'),
      join(dir, 'kubeconfig'),
    );
    expect([c.url.href, c.ca?.toString(), c.token, c.serverName, c.insecureSkipTLSVerify]).toEqual([
      'https://127.0.0.1:8443/authz',
      'CA',
      'from-file',
      'authz.local',
      false,
    ]);
  });

  it('takes inline data', () => {
    const c = parseWebhookConfig(
      JSON.stringify({
        clusters: [
          {
            name: 'x',
            cluster: { server: 'https://h', 'certificate-authority-data': Buffer.from('CA').toString('base64') },
          },
        ],
        users: [{ name: 'u', user: { 'client-certificate-data': 'Y2VydA==', 'client-key-data': 'a2V5' } }],
      }),
      join(dir, 'kubeconfig'),
    );
    expect([c.ca?.toString(), c.cert?.toString(), c.key?.toString()]).toEqual(['CA', 'cert', 'key']);
  });

  it.each([
    ['not YAML', ': : :\n\t-', 'not a kubeconfig file'],
    ['no cluster', 'users: []', 'no cluster'],
    [
      'a missing context',
      'current-context: nope\nclusters: [{name: a, cluster: {server: "https://h"}}]',
      'context "nope" not found',
    ],
    ['no server', 'clusters: [{name: a, cluster: {}}]', 'the cluster has no server'],
    ['a bad URL', 'clusters: [{name: a, cluster: {server: "ftp://h"}}]', 'must be an http or https URL'],
    [
      'a missing file',
      'clusters: [{name: a, cluster: {server: "https://h", certificate-authority: nope.pem}}]',
      'cannot read certificate authority',
    ],
    [
      'a certificate without key',
      'clusters: [{name: a, cluster: {server: "https://h"}}]\nusers: [{name: u, user: {client-certificate-data: Y2VydA==}}]',
      'a client certificate needs its key',
    ],
  ])('rejects %s', (_name, text, message) => {
    expect(() => parseWebhookConfig(text, join(dir, 'kubeconfig'))).toThrow(message);
  });
});
