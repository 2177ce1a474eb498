/** Test certificates made with the openssl command (EC P-256, so they are quick): CAs and the client certs they sign. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate and key as files, and their PEM. */
export interface CertFiles {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function files(dir: string, name: string): CertFiles {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

/** A self-signed CA named `name` in `dir`. */
export function makeCA(dir: string, name: string): CertFiles {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      ...EC,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  return files(dir, name);
}

/** A client certificate `/CN=<cn>/O=<org>…` signed by `ca`, as `name` in `dir`. */
export function signClient(dir: string, ca: CertFiles, name: string, cn: string, orgs: string[] = []): CertFiles {
  const subj = `/CN=${cn}${orgs.map((o) => `/O=${o}`).join('')}`;
  const csr = execFileSync('openssl', ['req', ...EC, '-keyout', `${name}.key`, '-subj', subj], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  execFileSync(
    'openssl',
    ['x509', '-req', '-CA', ca.certFile, '-CAkey', ca.keyFile, '-CAcreateserial', '-days', '2', '-out', `${name}.crt`],
    { cwd: dir, input: csr, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  return files(dir, name);
}
