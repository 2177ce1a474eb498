/**
 * The CSR signing controller (model: Kubernetes 1.21 `pkg/controller/certificates/signer`): signs the approved,
 * not failed requests of the built-in signers it has a CA for (`--cluster-signing-*`), with the usages asked and
 * `--cluster-signing-duration` (capped at the CA's expiry). A request its signer will not sign — a node client
 * request that is not `system:nodes`/`system:node:<name>` with client usages, a serving one without names,
 * API server client usages other than client ones — gets a Failed condition (`SignerValidationFailure`) instead.
 * Requests of other signers are left to their own signers.
 */
import { type CertificateSigningRequest, CertificateSigningRequestKind, SIGNER_NAMES } from '@platform/api';
import {
  type CertificateRequest,
  nodeClientRequestProblem,
  nodeServingRequestProblem,
  parseCertificateRequest,
  signCertificateRequest,
  type SigningAuthority,
} from '@platform/common';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { hasTrueCondition, nowTime, runCertificateController } from '../util/certificate-controller';
import { type CSRSigningConfig, CSRSigningOptions, readSigningFiles, SIGNER_FLAGS } from './options';

const API_SERVER_CLIENT_USAGES = new Set(['digital signature', 'key encipherment', 'client auth']);

/** Why `signerName` will not sign the request, or undefined when it will (1.21's per-signer `isRecognized`). */
export function signerProblem(
  signerName: string,
  r: CertificateRequest,
  usages: readonly string[],
): string | undefined {
  switch (signerName) {
    case SIGNER_NAMES.apiServerClientNodeAgent:
      return nodeClientRequestProblem(r, usages);
    case SIGNER_NAMES.nodeAgentServing:
      return nodeServingRequestProblem(r, usages);
    case SIGNER_NAMES.apiServerClient: {
      const bad = usages.find((u) => !API_SERVER_CLIENT_USAGES.has(u));
      return bad === undefined ? undefined : `invalid usage for client certificate: ${bad}`;
    }
    default:
      return undefined;
  }
}

/** The CA of each built-in signer the options give one, by signer name. */
export function signingAuthorities(o: CSRSigningConfig): Map<string, SigningAuthority> {
  const out = new Map<string, SigningAuthority>();
  for (const [infix, name] of SIGNER_FLAGS) {
    const own = o.perSigner[name]!;
    const files = own.certFile ? own : o.general;
    if (!files.certFile) continue;
    try {
      out.set(name, readSigningFiles(files));
    } catch (err) {
      throw new Error(`--cluster-signing-${own.certFile ? `${infix}-` : ''}cert-file: ${(err as Error).message}`);
    }
  }
  return out;
}

async function run(ctx: ControllerContext, o: CSRSigningConfig): Promise<void> {
  const cas = signingAuthorities(o);
  if (cas.size === 0) {
    ctx.logger.warn('csrsigning is disabled: no --cluster-signing-cert-file or signer-specific pair was given');
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    return;
  }
  const client = ctx.client.resource(CertificateSigningRequestKind);
  ctx.logger.info('Signing certificate requests', { signers: [...cas.keys()], durationMs: o.durationMs });
  const handle = async (csr: CertificateSigningRequest): Promise<void> => {
    if (!hasTrueCondition(csr, 'Approved') || hasTrueCondition(csr, 'Failed')) return;
    const ca = cas.get(csr.spec?.signerName ?? '');
    if (!ca) return;
    const name = csr.metadata?.name ?? '';
    const request = parseCertificateRequest(Buffer.from(csr.spec.request ?? '', 'base64'));
    const usages = csr.spec.usages ?? [];
    const problem = signerProblem(csr.spec.signerName, request, usages);
    if (problem) {
      (csr.status ??= {}).conditions = [
        ...(csr.status.conditions ?? []),
        {
          type: 'Failed',
          status: 'True',
          reason: 'SignerValidationFailure',
          message: problem,
          lastUpdateTime: nowTime(),
        },
      ];
      await client.updateStatus(csr, { signal: ctx.signal });
      ctx.logger.info('Refused to sign a certificate request', { name, reason: problem });
      return;
    }
    const pem = await signCertificateRequest(ca, { request, usages, durationMs: o.durationMs });
    (csr.status ??= {}).certificate = Buffer.from(pem).toString('base64');
    await client.updateStatus(csr, { signal: ctx.signal });
    ctx.logger.info('Signed a certificate request', { name, signerName: csr.spec.signerName });
  };
  await runCertificateController(ctx, 'certificate', 5, handle);
}

/** The `csrsigning` controller. */
export const csrSigningController: ControllerDefinition<CSRSigningConfig> = {
  name: 'csrsigning',
  enabledByDefault: true,
  serviceAccount: 'certificate-controller',
  options: () => new CSRSigningOptions(),
  run,
};
