/**
 * ServiceAccount (model: Kubernetes 1.21 `plugin/pkg/admission/serviceaccount`, BoundServiceAccountTokenVolume on):
 * a new pod runs as `spec.serviceAccountName` (`default` when unset), which must exist; unless the pod or the
 * service account opts out (`automountServiceAccountToken: false`), the pod gets a projected volume
 * `kube-api-access-<random>` with a bound token (`token`, 3607 s), the cluster CA (`ca.crt` of the
 * `kube-root-ca.crt` ConfigMap) and its namespace, mounted read-only at
 * `/var/run/secrets/kubernetes.io/serviceaccount` in every container that has nothing mounted there. With the
 * feature gate off, the service account's token Secret is mounted instead (and must exist). A pod without image pull
 * secrets gets its service account's. With the `kubernetes.io/enforce-mountable-secrets` annotation, the pod may
 * only use the service account's secrets. Mirror pods may not use service accounts or secrets at all.
 */
import { randomBytes } from 'node:crypto';

import { type Pod, type Secret, type ServiceAccount, type Volume } from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { annotation, isPod, MIRROR_POD_ANNOTATION, podOf } from './util';

export const NAME = 'ServiceAccount';

/** Where containers find their service account credentials. */
export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The prefix of the projected token volume's name. */
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
/** The ConfigMap every namespace has with the cluster's CA (`ca.crt`). */
export const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt';
/** Service accounts with this annotation set to "true" restrict their pods to their own secrets. */
export const ENFORCE_MOUNTABLE_SECRETS = 'kubernetes.io/enforce-mountable-secrets';
/** Lifetime of the projected token (an hour plus 7 s, as Kubernetes marks tokens it may extend). */
export const TOKEN_EXPIRATION_SECONDS = 3607;

const SERVICE_ACCOUNTS = { group: '', resource: 'serviceaccounts' };
const SECRETS = { group: '', resource: 'secrets' };
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(n: number): string {
  const bytes = randomBytes(n);
  let s = '';
  for (const b of bytes) s += ALPHANUMS[b % ALPHANUMS.length];
  return s;
}

type Container = { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] };

function containers(pod: Pod): Container[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])] as Container[];
}

/** Names of the secrets a pod's volumes, env and image pull secrets reference. */
function referencedSecrets(pod: Pod): { name: string; where: string }[] {
  const out: { name: string; where: string }[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    if (v.secret?.secretName) out.push({ name: v.secret.secretName, where: `volume ${v.name}` });
    for (const s of v.projected?.sources ?? []) {
      if (s.secret?.name) out.push({ name: s.secret.name, where: `volume ${v.name}` });
    }
  }
  const all = [
    ...(pod.spec?.initContainers ?? []),
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.ephemeralContainers ?? []),
  ];
  for (const c of all) {
    for (const e of c.env ?? []) {
      const n = e.valueFrom?.secretKeyRef?.name;
      if (n) out.push({ name: n, where: `container ${c.name} env` });
    }
    for (const e of c.envFrom ?? [])
      if (e.secretRef?.name) out.push({ name: e.secretRef.name, where: `container ${c.name} envFrom` });
  }
  return out;
}

/** The ServiceAccount plugin. */
export class ServiceAccountPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(
    private readonly client: InternalClient,
    private readonly boundTokenVolume: boolean,
  ) {}

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a)) return;
    const pod = podOf(a);
    if (!pod?.spec) return;
    if (annotation(pod, MIRROR_POD_ANNOTATION) !== undefined) return;
    pod.spec.serviceAccountName ||= 'default';
    const sa = await this.serviceAccount(a, pod.spec.serviceAccountName);
    const automount = pod.spec.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true;
    if (automount) await this.mountToken(a, pod, sa);
    if (!pod.spec.imagePullSecrets?.length && sa.imagePullSecrets?.length) {
      pod.spec.imagePullSecrets = structuredClone(sa.imagePullSecrets);
    }
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a)) return;
    const pod = podOf(a);
    if (!pod?.spec) return;
    if (annotation(pod, MIRROR_POD_ANNOTATION) !== undefined) {
      if (pod.spec.serviceAccountName) throw admissionForbidden(a, 'a mirror pod may not reference service accounts');
      const s = referencedSecrets(pod)[0];
      if (s) throw admissionForbidden(a, `a mirror pod may not reference secrets (${s.where} references ${s.name})`);
      if (pod.spec.volumes?.some((v) => v.projected?.sources?.some((p) => p.serviceAccountToken))) {
        throw admissionForbidden(a, 'a mirror pod may not use ServiceAccountToken volume projections');
      }
      return;
    }
    const name = pod.spec.serviceAccountName;
    if (!name) throw admissionForbidden(a, 'no service account name was set on the pod');
    const sa = await this.serviceAccount(a, name);
    if (annotation(sa, ENFORCE_MOUNTABLE_SECRETS) !== 'true') return;
    const allowed = new Set((sa.secrets ?? []).map((s) => s.name));
    for (const s of referencedSecrets(pod)) {
      if (!allowed.has(s.name)) {
        throw admissionForbidden(
          a,
          `${s.where} references secret ${s.name}, which is not allowed because service account ${name} does not reference that secret`,
        );
      }
    }
    for (const s of pod.spec.imagePullSecrets ?? []) {
      if (s.name && !allowed.has(s.name) && !(sa.imagePullSecrets ?? []).some((p) => p.name === s.name)) {
        throw admissionForbidden(
          a,
          `image pull secret ${s.name} is not allowed because service account ${name} does not reference that image pull secret`,
        );
      }
    }
  }

  private async serviceAccount(a: AdmissionAttributes, name: string): Promise<ServiceAccount> {
    const sa = (await this.client.get(SERVICE_ACCOUNTS, a.namespace, name, { cached: true })) as
      ServiceAccount | undefined;
    if (!sa) {
      throw admissionForbidden(
        a,
        `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`,
      );
    }
    return sa;
  }

  private async mountToken(a: AdmissionAttributes, pod: Pod, sa: ServiceAccount): Promise<void> {
    const spec = pod.spec as NonNullable<Pod['spec']>;
    const all = containers(pod);
    // Containers that already mount something at the path keep it; nothing to do when all of them do.
    const needing = all.filter((c) => !(c.volumeMounts ?? []).some((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH));
    if (needing.length === 0) return;
    const volumes = (spec.volumes ??= []);
    let volume: Volume | undefined;
    if (this.boundTokenVolume) {
      volume = volumes.find((v) => v.name.startsWith(TOKEN_VOLUME_PREFIX) && v.projected);
      if (!volume) {
        volume = {
          name: `${TOKEN_VOLUME_PREFIX}${randomSuffix(5)}`,
          projected: {
            defaultMode: 0o644,
            sources: [
              { serviceAccountToken: { path: 'token', expirationSeconds: TOKEN_EXPIRATION_SECONDS } },
              { configMap: { name: ROOT_CA_CONFIG_MAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              {
                downwardAPI: {
                  items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
                },
              },
            ],
          },
        } as Volume;
        volumes.push(volume);
      }
    } else {
      const secret = await this.tokenSecret(a, sa);
      volume = volumes.find((v) => v.secret?.secretName === secret);
      if (!volume) {
        volume = { name: secret, secret: { secretName: secret, defaultMode: 0o644 } } as Volume;
        volumes.push(volume);
      }
    }
    for (const c of needing) {
      (c.volumeMounts ??= []).push({ name: volume.name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH });
    }
  }

  /** The name of a token Secret of the service account (legacy tokens). */
  private async tokenSecret(a: AdmissionAttributes, sa: ServiceAccount): Promise<string> {
    const saName = sa.metadata?.name ?? '';
    const secrets = (await this.client.list(SECRETS, a.namespace)) as Secret[];
    const referenced = new Set((sa.secrets ?? []).map((s) => s.name));
    const token = secrets.find(
      (s) =>
        s.type === 'kubernetes.io/service-account-token' &&
        referenced.has(s.metadata?.name) &&
        s.metadata?.annotations?.['kubernetes.io/service-account.name'] === saName,
    );
    if (!token?.metadata?.name) {
      throw admissionForbidden(
        a,
        `no API token found for service account "${saName}", retry after the token is automatically created and added to the service account`,
      );
    }
    return token.metadata.name;
  }
}

export const factory: PluginFactory = (c) =>
  new ServiceAccountPlugin(c.client, c.settings.boundServiceAccountTokenVolume);
