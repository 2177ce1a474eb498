import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { DelegatedAuthenticationOptions, DelegatedAuthorizationOptions } from './delegated-auth-options';
import { parseForTest } from './testing/parse';

const parse = parseForTest;

describe('delegated authentication and authorization options', () => {
  it('parses values and checks files exist', () => {
    const dir = mkdtempSync(join(tmpdir(), 'authn-'));
    const ca = join(dir, 'ca.crt');
    writeFileSync(ca, 'x');
    const authn = new DelegatedAuthenticationOptions({ tolerateLookupFailure: true });
    const authz = new DelegatedAuthorizationOptions();
    const r = parse(
      [authn, authz],
      [
        `--client-ca-file=${ca}`,
        '--requestheader-username-headers=X-Remote-User,X-User',
        '--authentication-token-webhook-cache-ttl=1m',
        '--authorization-always-allow-paths=/healthz,/metrics',
        '--authorization-webhook-cache-unauthorized-ttl=5s',
      ],
    );
    expect(r.errors).toEqual([]);
    const c: Parameters<DelegatedAuthenticationOptions['applyTo']>[0] &
      Parameters<DelegatedAuthorizationOptions['applyTo']>[0] = {};
    authn.applyTo(c);
    authz.applyTo(c);
    expect(c.authentication).toMatchObject({
      clientCAFile: ca,
      tolerateLookupFailure: true,
      tokenWebhookCacheTTLMs: 60_000,
      requestHeader: {
        usernameHeaders: ['X-Remote-User', 'X-User'],
        groupHeaders: ['x-remote-group'],
        extraHeaderPrefixes: ['x-remote-extra-'],
      },
    });
    expect(c.authorization).toEqual({
      remoteKubeConfigFile: '',
      alwaysAllowPaths: ['/healthz', '/metrics'],
      allowCacheTTLMs: 10_000,
      denyCacheTTLMs: 5_000,
    });
  });

  it('rejects bad values', () => {
    const r = parse(
      [new DelegatedAuthenticationOptions(), new DelegatedAuthorizationOptions()],
      [
        '--authentication-clientconfig=/nonexistent/kubeconfig',
        '--requestheader-group-headers=bad header',
        '--authorization-always-allow-paths=healthz',
        '--authentication-skip-lookup=maybe',
      ],
    );
    expect(r.messages).toEqual([
      'invalid argument "bad header" for "--requestheader-group-headers" flag: "bad header" is not a valid HTTP header name',
      'invalid argument "maybe" for "--authentication-skip-lookup" flag: strconv.ParseBool: parsing "maybe": invalid syntax',
      '--authentication-clientconfig: file "/nonexistent/kubeconfig" does not exist',
      'invalid argument "healthz" for "--authorization-always-allow-paths" flag: path "healthz" must start with "/"',
    ]);
  });
});
