/**
 * Detached JWS signatures of `cluster-info` (model: Kubernetes 1.21 `k8s.io/cluster-bootstrap/token/jws`): an
 * HS256 JWS of the content keyed by the token's secret, header `{"alg":"HS256","kid":"<token id>"}`, in compact
 * form with the payload left out (`<header>..<signature>`). A joining node that knows a bootstrap token checks with
 * it that the cluster-info it read anonymously is the cluster's.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The signature of `content` with the token `<tokenID>.<tokenSecret>`. */
export function computeDetachedSignature(content: string, tokenID: string, tokenSecret: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: tokenID })).toString('base64url');
  const payload = Buffer.from(content).toString('base64url');
  const mac = createHmac('sha256', tokenSecret).update(`${header}.${payload}`).digest('base64url');
  return `${header}..${mac}`;
}

/** Whether `signature` is the detached signature of `content` with the token (timing-safe). */
export function verifyDetachedSignature(
  content: string,
  signature: string,
  tokenID: string,
  tokenSecret: string,
): boolean {
  const want = Buffer.from(computeDetachedSignature(content, tokenID, tokenSecret));
  const got = Buffer.from(signature);
  return want.length === got.length && timingSafeEqual(want, got);
}
