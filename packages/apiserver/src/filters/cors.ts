/**
 * CORS (`--cors-allowed-origins`; model: apiserver `pkg/server/filters/cors.go`): a request whose `Origin` matches
 * one of the patterns (regular expressions, matched anywhere in the origin as Kubernetes 1.21 does) gets the
 * `Access-Control-*` headers of Kubernetes' WithCORS; a preflight `OPTIONS` from such an origin is answered 204 at
 * once, before authentication. Other requests pass unchanged.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

const ALLOW_METHODS = ['POST', 'GET', 'OPTIONS', 'PUT', 'DELETE', 'PATCH'].join(', ');
const ALLOW_HEADERS = [
  'Content-Type',
  'Content-Length',
  'Accept-Encoding',
  'X-CSRF-Token',
  'Authorization',
  'X-Requested-With',
  'If-Modified-Since',
].join(', ');
const EXPOSE_HEADERS = 'Date';

/** Compiles the origin patterns; throws naming the option and the pattern that is not a valid expression. */
export function compileOrigins(patterns: readonly string[]): RegExp[] {
  return patterns.map((p) => {
    try {
      return new RegExp(p);
    } catch (err) {
      throw new Error(
        `--cors-allowed-origins: invalid regular expression ${JSON.stringify(p)}: ${(err as Error).message}`,
      );
    }
  });
}

/** The CORS filter; undefined when no origin is allowed (CORS off). */
export function cors(
  patterns: readonly string[],
): ((req: IncomingMessage, res: ServerResponse, next: () => void) => void) | undefined {
  if (patterns.length === 0) return undefined;
  const origins = compileOrigins(patterns);
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (typeof origin === 'string' && origin !== '' && origins.some((re) => re.test(origin))) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
      res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      if (req.method === 'OPTIONS') {
        res.statusCode = 204;
        res.end();
        return;
      }
    }
    next();
  };
}
