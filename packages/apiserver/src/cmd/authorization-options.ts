/**
 * The authorization options of the API server (model: Kubernetes 1.21 `pkg/kubeapiserver/options/authorization.go`
 * and `pkg/kubeapiserver/authorizer/config.go`): `--authorization-mode`, an ordered chain of AlwaysAllow,
 * AlwaysDeny, ABAC, RBAC, Node and Webhook, with the files and webhook settings those modes need. The chain is built
 * into `authorizer`, behind a first authorizer that allows the members of `system:masters` (as Kubernetes puts in
 * front for its privileged loopback client).
 */
import { durationFlag, type FlagDef, OptionGroupBase, stringFlag, stringsFlag } from '@platform/common';

import { AbacAuthorizer } from '../auth/authorization/abac';
import { NodeAuthorizer } from '../auth/authorization/node/authorizer';
import { RbacAuthorizer } from '../auth/authorization/rbac/authorizer';
import { WebhookAuthorizer, type WebhookVersion } from '../auth/authorization/webhook';
import { readWebhookConfig } from '../auth/authorization/webhook-config';
import {
  ALWAYS_ALLOW,
  ALWAYS_DENY,
  type Authorizer,
  privilegedGroupsAuthorizer,
  unionAuthorizer,
} from '../auth/authorizer';

/** The modes of `--authorization-mode`. */
export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

/** The settings the chain is built from (what the flags hold). */
export interface AuthorizationSettings {
  modes: string[];
  policyFile: string;
  webhookConfigFile: string;
  webhookVersion: string;
  webhookCacheAuthorizedTtlMs: number;
  webhookCacheUnauthorizedTtlMs: number;
  /** How long one webhook call may take, ms (not a flag; default 30 s). */
  webhookTimeoutMs?: number;
}

/** The problems of `s`, each naming its option (model: `AuthorizationOptions.Validate`). */
export function validateAuthorizationSettings(s: AuthorizationSettings): Error[] {
  const errs: Error[] = [];
  if (s.modes.length === 0) errs.push(new Error('--authorization-mode: at least one authorization mode must be given'));
  const seen = new Set<string>();
  for (const m of s.modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(m)) {
      errs.push(
        new Error(
          `--authorization-mode: ${JSON.stringify(m)} is not a valid mode (valid modes: ${AUTHORIZATION_MODES.join(', ')})`,
        ),
      );
    }
    if (seen.has(m)) errs.push(new Error(`--authorization-mode: ${JSON.stringify(m)} is given more than once`));
    seen.add(m);
  }
  if (seen.has('ABAC') && !s.policyFile)
    errs.push(new Error('--authorization-policy-file is required with --authorization-mode=ABAC'));
  if (!seen.has('ABAC') && s.policyFile)
    errs.push(new Error('--authorization-policy-file cannot be given without --authorization-mode=ABAC'));
  if (seen.has('Webhook') && !s.webhookConfigFile)
    errs.push(new Error('--authorization-webhook-config-file is required with --authorization-mode=Webhook'));
  if (!seen.has('Webhook') && s.webhookConfigFile)
    errs.push(new Error('--authorization-webhook-config-file cannot be given without --authorization-mode=Webhook'));
  if (s.webhookVersion !== 'v1' && s.webhookVersion !== 'v1beta1')
    errs.push(
      new Error(
        `--authorization-webhook-version: ${JSON.stringify(s.webhookVersion)} is not supported (supported: v1, v1beta1)`,
      ),
    );
  if (s.webhookCacheAuthorizedTtlMs < 0)
    errs.push(new Error('--authorization-webhook-cache-authorized-ttl must not be negative'));
  if (s.webhookCacheUnauthorizedTtlMs < 0)
    errs.push(new Error('--authorization-webhook-cache-unauthorized-ttl must not be negative'));
  return errs;
}

/**
 * The chain of `s` (validated first: throws the first problem). Reads the policy and webhook files; throws an
 * Error naming the option when one cannot be read or parsed.
 */
export function buildAuthorizer(s: AuthorizationSettings): Authorizer {
  const problems = validateAuthorizationSettings(s);
  if (problems.length) throw problems[0]!;
  const chain: Authorizer[] = [privilegedGroupsAuthorizer()];
  for (const mode of s.modes as AuthorizationMode[]) {
    switch (mode) {
      case 'AlwaysAllow':
        chain.push(ALWAYS_ALLOW);
        break;
      case 'AlwaysDeny':
        chain.push(ALWAYS_DENY);
        break;
      case 'ABAC':
        chain.push(AbacAuthorizer.fromFile(s.policyFile));
        break;
      case 'RBAC':
        chain.push(new RbacAuthorizer());
        break;
      case 'Node':
        chain.push(new NodeAuthorizer());
        break;
      case 'Webhook': {
        let client;
        try {
          client = readWebhookConfig(s.webhookConfigFile);
        } catch (err) {
          throw new Error(`--authorization-webhook-config-file: ${(err as Error).message}`);
        }
        chain.push(
          new WebhookAuthorizer({
            client,
            version: s.webhookVersion as WebhookVersion,
            authorizedTtlMs: s.webhookCacheAuthorizedTtlMs,
            unauthorizedTtlMs: s.webhookCacheUnauthorizedTtlMs,
            ...(s.webhookTimeoutMs !== undefined ? { timeoutMs: s.webhookTimeoutMs } : {}),
          }),
        );
        break;
      }
    }
  }
  return unionAuthorizer(chain);
}

/** The option family; `applyTo` sets `authorizer`. */
export class AuthorizationOptions extends OptionGroupBase<{ authorizer?: Authorizer }> {
  readonly settings: AuthorizationSettings = {
    modes: ['AlwaysAllow'],
    policyFile: '',
    webhookConfigFile: '',
    webhookVersion: 'v1beta1',
    webhookCacheAuthorizedTtlMs: 5 * 60_000,
    webhookCacheUnauthorizedTtlMs: 30_000,
  };

  constructor() {
    super('Authorization');
  }

  protected flagDefs(): FlagDef[] {
    const s = this.settings;
    return [
      stringsFlag(
        'authorization-mode',
        `Ordered list of plug-ins to do authorization on secure port. Comma-delimited list of: ${AUTHORIZATION_MODES.join(',')}.`,
        s.modes,
        (v) => (s.modes = v),
      ),
      stringFlag(
        'authorization-policy-file',
        'File with authorization policy in json line by line format, used with --authorization-mode=ABAC, on the secure port.',
        s.policyFile,
        (v) => (s.policyFile = v),
      ),
      stringFlag(
        'authorization-webhook-config-file',
        "File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook. The API server will query the remote service to determine access on the API server's secure port.",
        s.webhookConfigFile,
        (v) => (s.webhookConfigFile = v),
      ),
      durationFlag(
        'authorization-webhook-cache-authorized-ttl',
        "The duration to cache 'authorized' responses from the webhook authorizer.",
        s.webhookCacheAuthorizedTtlMs,
        (v) => (s.webhookCacheAuthorizedTtlMs = v),
      ),
      durationFlag(
        'authorization-webhook-cache-unauthorized-ttl',
        "The duration to cache 'unauthorized' responses from the webhook authorizer.",
        s.webhookCacheUnauthorizedTtlMs,
        (v) => (s.webhookCacheUnauthorizedTtlMs = v),
      ),
      stringFlag(
        'authorization-webhook-version',
        'The API version of the authorization.platform SubjectAccessReview to send to and expect from the webhook.',
        s.webhookVersion,
        (v) => (s.webhookVersion = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return validateAuthorizationSettings(this.settings);
  }

  applyTo(config: { authorizer?: Authorizer }): void {
    config.authorizer = buildAuthorizer(this.settings);
  }
}
