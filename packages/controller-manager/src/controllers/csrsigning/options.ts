/**
 * The options of the CSR signing controller (Document 2; model: kube-controller-manager 1.21
 * `CSRSigningControllerOptions`): a general CA pair that signs for every built-in signer, or one pair per signer,
 * never both; and the validity of the certificates signed.
 */
import { readFileSync } from 'node:fs';

import { SIGNER_NAMES } from '@platform/api';
import { durationFlag, type FlagDef, parseCertKeyPair, stringFlag } from '@platform/common';

import { ControllerOptions } from '../../controller';

/** A CA certificate file and its key file ('' when not given). */
export interface SigningFiles {
  certFile: string;
  keyFile: string;
}

/** The values of the CSR signing controller's options. */
export interface CSRSigningConfig {
  /** `--cluster-signing-{cert,key}-file`: the CA of every built-in signer without its own pair. */
  general: SigningFiles;
  /** The signer-specific pairs, by signer name. */
  perSigner: Record<string, SigningFiles>;
  /** `--cluster-signing-duration` in milliseconds. */
  durationMs: number;
}

/** The flag infix of each built-in signer's pair (`--cluster-signing-<infix>-cert-file`). */
export const SIGNER_FLAGS: readonly [infix: string, signerName: string][] = [
  ['apiserver-client', SIGNER_NAMES.apiServerClient],
  ['agent-client', SIGNER_NAMES.apiServerClientNodeAgent],
  ['agent-serving', SIGNER_NAMES.nodeAgentServing],
  ['legacy-unknown', SIGNER_NAMES.legacyUnknown],
];

const YEAR_MS = 365 * 24 * 3600 * 1000;

export class CSRSigningOptions extends ControllerOptions<CSRSigningConfig> {
  private readonly c: CSRSigningConfig = {
    general: { certFile: '', keyFile: '' },
    perSigner: Object.fromEntries(SIGNER_FLAGS.map(([, name]) => [name, { certFile: '', keyFile: '' }])),
    durationMs: YEAR_MS,
  };

  constructor() {
    super('CSR signing controller');
  }

  protected flagDefs(): FlagDef[] {
    const c = this.c;
    const flags: FlagDef[] = [
      stringFlag(
        'cluster-signing-cert-file',
        'Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates. If specified, no more specific --cluster-signing-* flag may be specified.',
        '',
        (v) => (c.general.certFile = v),
      ),
      stringFlag(
        'cluster-signing-key-file',
        'Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates. If specified, no more specific --cluster-signing-* flag may be specified.',
        '',
        (v) => (c.general.keyFile = v),
      ),
      durationFlag(
        'cluster-signing-duration',
        'The length of duration signed certificates will be given.',
        c.durationMs,
        (v) => (c.durationMs = v),
      ),
    ];
    for (const [infix, name] of SIGNER_FLAGS) {
      const files = c.perSigner[name]!;
      flags.push(
        stringFlag(
          `cluster-signing-${infix}-cert-file`,
          `Filename containing a PEM-encoded X509 CA certificate used to issue certificates for the ${name} signer. If specified, --cluster-signing-{cert,key}-file must not be set.`,
          '',
          (v) => (files.certFile = v),
        ),
        stringFlag(
          `cluster-signing-${infix}-key-file`,
          `Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates for the ${name} signer. If specified, --cluster-signing-{cert,key}-file must not be set.`,
          '',
          (v) => (files.keyFile = v),
        ),
      );
    }
    return flags;
  }

  protected override validateValues(): Error[] {
    const c = this.c;
    const errs: Error[] = [];
    const pairProblem = (prefix: string, f: SigningFiles): void => {
      if (!f.certFile && !f.keyFile) return;
      if (!f.certFile || !f.keyFile) {
        errs.push(new Error(`${JSON.stringify(prefix)}: cannot specify key without cert or cert without key`));
        return;
      }
      try {
        const { certPem, keyPem } = readSigningFiles(f);
        parseCertKeyPair(certPem, keyPem, f.certFile, f.keyFile);
      } catch (err) {
        errs.push(new Error(`--${prefix}-{cert,key}-file: ${(err as Error).message}`));
      }
    };
    pairProblem('cluster-signing', c.general);
    const specific = SIGNER_FLAGS.filter(([, name]) => c.perSigner[name]!.certFile || c.perSigner[name]!.keyFile);
    for (const [infix, name] of specific) pairProblem(`cluster-signing-${infix}`, c.perSigner[name]!);
    if (specific.length && (c.general.certFile || c.general.keyFile)) {
      errs.push(
        new Error(
          'cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time',
        ),
      );
    }
    if (c.durationMs <= 0) errs.push(new Error('--cluster-signing-duration must be positive'));
    return errs;
  }

  values(): CSRSigningConfig {
    return structuredClone(this.c);
  }
}

/** Reads a CA pair; throws an Error naming the file that cannot be read. */
export function readSigningFiles(f: SigningFiles): { certPem: string; keyPem: string } {
  const read = (file: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`unable to read ${JSON.stringify(file)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  };
  return { certPem: read(f.certFile), keyPem: read(f.keyFile) };
}
