/**
 * The loop the CSR approver and signer share (model: Kubernetes 1.21 `pkg/controller/certificates/
 * certificate_controller.go`): every added or changed CertificateSigningRequest is queued by name; a request that
 * already holds a certificate is left alone; otherwise `handle` gets a copy it may change. A failed `handle` is
 * retried with the queue's backoff.
 */
import { type CertificateSigningRequest, CertificateSigningRequestKind } from '@platform/api';
import { runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext } from '../../controller';
import { waitForSynced } from './wait-synced';

/** Runs `handle` on the requests without a certificate, with `workers` workers, until the controller stops. */
export async function runCertificateController(
  ctx: ControllerContext,
  queueName: string,
  workers: number,
  handle: (csr: CertificateSigningRequest) => Promise<void>,
): Promise<void> {
  const csrs = ctx.informers.informerFor(CertificateSigningRequestKind);
  const queue = new WorkQueue<string>({ name: queueName, metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  csrs.addEventHandler({
    onAdd: (csr) => queue.add(csr.metadata?.name ?? ''),
    onUpdate: (_old, csr) => queue.add(csr.metadata?.name ?? ''),
    onDelete: () => {},
  });
  if (!(await waitForSynced(ctx.signal, [csrs]))) return;
  await runWorkers(
    queue,
    workers,
    async (name) => {
      const csr = csrs.indexer.get(name);
      if (!csr || csr.status?.certificate) return;
      await handle(structuredClone(csr) as CertificateSigningRequest);
    },
    (name, err) => {
      if (!ctx.signal.aborted)
        ctx.logger.info('Sync of a certificate signing request failed, retrying', { name, error: String(err) });
    },
  );
}

/** Whether a request holds a condition of `type` with status True (v1beta1 objects may leave status out). */
export function hasTrueCondition(csr: CertificateSigningRequest, type: string): boolean {
  return (csr.status?.conditions ?? []).some((c) => c.type === type && (c.status === 'True' || !c.status));
}

/** The current time as a metav1.Time string (seconds). */
export function nowTime(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
