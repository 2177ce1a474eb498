import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseOrExit } from '@platform/common';
import { Command } from 'commander';

import { type Attributes } from '../auth/authorizer';
import { AuthorizationOptions, type AuthorizationSettings, buildAuthorizer } from './authorization-options';

function parse(argv: string[]): { errors: string[]; options: AuthorizationOptions } {
  const options = new AuthorizationOptions();
  const cmd = new Command('test');
  options.addFlags(cmd);
  const out = parseOrExit(cmd, [options as never], argv, undefined, { stdout: () => {}, stderr: () => {} });
  return { errors: out.errors.map((e) => e.message), options };
}

const attrs = (user: string, groups: string[] = []): Attributes => ({
  user: { name: user, groups },
  verb: 'get',
  resourceRequest: true,
  namespace: 'default',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  name: '',
  path: '',
});

describe('AuthorizationOptions', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'authz-options-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('defaults to AlwaysAllow with Kubernetes’ webhook settings', () => {
    const { errors, options } = parse([]);
    expect(errors).toEqual([]);
    expect(options.settings).toEqual({
      modes: ['AlwaysAllow'],
      policyFile: '',
      webhookConfigFile: '',
      webhookVersion: 'v1beta1',
      webhookCacheAuthorizedTtlMs: 300_000,
      webhookCacheUnauthorizedTtlMs: 30_000,
    });
  });

  it('reads an ordered list of modes and the webhook settings', () => {
    const { errors, options } = parse([
      '--authorization-mode=Node,RBAC',
      '--authorization-webhook-cache-authorized-ttl=1m',
      '--authorization-webhook-cache-unauthorized-ttl=5s',
      '--authorization-webhook-version=v1',
    ]);
    expect(errors).toEqual([]);
    expect(options.settings).toMatchObject({
      modes: ['Node', 'RBAC'],
      webhookVersion: 'v1',
      webhookCacheAuthorizedTtlMs: 60_000,
      webhookCacheUnauthorizedTtlMs: 5_000,
    });
  });

  it.each([
    [['--authorization-mode=RBAC,Bogus'], '--authorization-mode: "Bogus" is not a valid mode'],
    [['--authorization-mode='], '--authorization-mode: at least one authorization mode must be given'],
    [['--authorization-mode=RBAC,RBAC'], '--authorization-mode: "RBAC" is given more than once'],
    [['--authorization-mode=ABAC'], '--authorization-policy-file is required with --authorization-mode=ABAC'],
    [
      ['--authorization-policy-file=/p'],
      '--authorization-policy-file cannot be given without --authorization-mode=ABAC',
    ],
    [
      ['--authorization-mode=Webhook'],
      '--authorization-webhook-config-file is required with --authorization-mode=Webhook',
    ],
    [
      ['--authorization-webhook-config-file=/c'],
      '--authorization-webhook-config-file cannot be given without --authorization-mode=Webhook',
    ],
    [['--authorization-webhook-version=v2'], '--authorization-webhook-version: "v2" is not supported'],
  ])('rejects %j, naming the option', (argv, message) => {
    const { errors } = parse(argv);
    expect(errors.some((e) => e.includes(message))).toBe(true);
  });

  const base: AuthorizationSettings = {
    modes: ['AlwaysAllow'],
    policyFile: '',
    webhookConfigFile: '',
    webhookVersion: 'v1beta1',
    webhookCacheAuthorizedTtlMs: 0,
    webhookCacheUnauthorizedTtlMs: 0,
  };

  it('fails to build on an unreadable or bad policy file, or a bad webhook configuration, naming the option', () => {
    expect(() => buildAuthorizer({ ...base, modes: ['ABAC'], policyFile: join(dir, 'missing') })).toThrow(
      '--authorization-policy-file: cannot read',
    );
    writeFileSync(
      join(dir, 'bad.jsonl'),
      '{"apiVersion":"abac.authorization.platform/v1beta1","kind":"Policy","spec":{"x":1}}\n',
    );
    expect(() => buildAuthorizer({ ...base, modes: ['ABAC'], policyFile: join(dir, 'bad.jsonl') })).toThrow(
      'line 1: unknown field spec.x',
    );
    writeFileSync(join(dir, 'hook.yaml'), 'clusters: []\n');
    expect(() => buildAuthorizer({ ...base, modes: ['Webhook'], webhookConfigFile: join(dir, 'hook.yaml') })).toThrow(
      '--authorization-webhook-config-file',
    );
  });

  it('builds the chain: system:masters first, then the modes in order', async () => {
    const deny = buildAuthorizer({ ...base, modes: ['AlwaysDeny', 'AlwaysAllow'] });
    // AlwaysDeny has no opinion (as in Kubernetes): a later AlwaysAllow still allows.
    expect((await deny.authorize(attrs('u'))).decision).toBe('allow');
    const onlyDeny = buildAuthorizer({ ...base, modes: ['AlwaysDeny'] });
    expect(await onlyDeny.authorize(attrs('u'))).toEqual({ decision: 'noOpinion', reason: 'Everything is forbidden.' });
    expect((await onlyDeny.authorize(attrs('admin', ['system:masters']))).decision).toBe('allow');
  });
});
