/**
 * The CSR cleaner (model: Kubernetes 1.21 `pkg/controller/certificates/cleaner`): once an hour, and once at start,
 * deletes the requests nobody needs any more: issued and approved more than an hour ago, denied or failed more
 * than an hour ago, pending for more than a day, or whose certificate has expired.
 */
import { X509Certificate } from 'node:crypto';

import { type CertificateSigningRequest, CertificateSigningRequestKind, isNotFound } from '@platform/api';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { waitForSynced } from '../util/wait-synced';

const HOUR_MS = 3600 * 1000;

/** 1.21's retention: how long each kind of finished request is kept, and how often the cleaner looks. */
export interface CSRCleanerConfig {
  pollingIntervalMs: number;
  approvedExpirationMs: number;
  deniedExpirationMs: number;
  pendingExpirationMs: number;
}

/** Kubernetes 1.21's values (not options there either). */
export const CSR_CLEANER_DEFAULTS: CSRCleanerConfig = {
  pollingIntervalMs: HOUR_MS,
  approvedExpirationMs: HOUR_MS,
  deniedExpirationMs: HOUR_MS,
  pendingExpirationMs: 24 * HOUR_MS,
};

function conditionTime(csr: CertificateSigningRequest, type: string): number | undefined {
  const c = (csr.status?.conditions ?? []).find((x) => x.type === type);
  if (!c) return undefined;
  const t = Date.parse(c.lastUpdateTime ?? '');
  return Number.isNaN(t) ? undefined : t;
}

function certificateExpired(csr: CertificateSigningRequest, now: number): boolean {
  const pem = Buffer.from(csr.status?.certificate ?? '', 'base64').toString('latin1');
  for (const m of pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)) {
    try {
      if (Date.parse(new X509Certificate(m[0]).validTo) < now) return true;
    } catch {
      // Unparsable content is not this controller's business (validation refuses it on write).
    }
  }
  return false;
}

/** Why `csr` should be deleted at `now`, or undefined to keep it. */
export function cleanupReason(csr: CertificateSigningRequest, now: number, o: CSRCleanerConfig): string | undefined {
  const older = (t: number | undefined, ms: number): boolean => t !== undefined && now - t > ms;
  const approved = conditionTime(csr, 'Approved');
  if (csr.status?.certificate && older(approved, o.approvedExpirationMs)) return 'issued past its deadline';
  if (older(conditionTime(csr, 'Denied'), o.deniedExpirationMs)) return 'denied past its deadline';
  if (older(conditionTime(csr, 'Failed'), o.deniedExpirationMs)) return 'failed past its deadline';
  const created = Date.parse(csr.metadata?.creationTimestamp ?? '');
  if (
    (csr.status?.conditions ?? []).length === 0 &&
    older(Number.isNaN(created) ? undefined : created, o.pendingExpirationMs)
  ) {
    return 'pending past its deadline';
  }
  if (certificateExpired(csr, now)) return 'its certificate expired';
  return undefined;
}

async function run(ctx: ControllerContext, o: CSRCleanerConfig): Promise<void> {
  const csrs = ctx.informers.informerFor(CertificateSigningRequestKind);
  const client = ctx.client.resource(CertificateSigningRequestKind);
  if (!(await waitForSynced(ctx.signal, [csrs]))) return;
  while (!ctx.signal.aborted) {
    for (const csr of csrs.indexer.list()) {
      const reason = cleanupReason(csr as CertificateSigningRequest, Date.now(), o);
      if (!reason) continue;
      const name = csr.metadata?.name ?? '';
      try {
        await client.delete(name, { signal: ctx.signal });
        ctx.logger.info('Deleted a certificate signing request', { name, reason });
      } catch (err) {
        if (!isNotFound(err) && !ctx.signal.aborted) {
          ctx.logger.info('Unable to delete a certificate signing request', { name, error: String(err) });
        }
      }
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, o.pollingIntervalMs);
      ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}

/** The `csrcleaner` controller. */
export const csrCleanerController: ControllerDefinition<CSRCleanerConfig> = {
  name: 'csrcleaner',
  enabledByDefault: true,
  serviceAccount: 'certificate-controller',
  run: (ctx, o) => run(ctx, { ...CSR_CLEANER_DEFAULTS, ...(o ?? {}) }),
};
