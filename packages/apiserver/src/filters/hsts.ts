/**
 * HSTS (`--strict-transport-security-directives`; model: apiserver `pkg/server/filters/hsts.go`): every response
 * gets `Strict-Transport-Security` with the directives joined by `; `, unless a handler set its own.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * Checks directives as Kubernetes does: each is `max-age=<seconds>`, `includeSubDomains` or `preload`. Returns the
 * problems, each naming the option.
 */
export function validateHstsDirectives(directives: readonly string[]): Error[] {
  const errs: Error[] = [];
  for (const d of directives) {
    if (d.trim() === '') {
      errs.push(new Error('--strict-transport-security-directives: empty value'));
      continue;
    }
    if (d === 'includeSubDomains' || d === 'preload') continue;
    const parts = d.split('=');
    if (parts.length !== 2 || parts[0] !== 'max-age' || !/^\d+$/.test(parts[1] ?? ''))
      errs.push(
        new Error(
          `--strict-transport-security-directives: invalid directive ${JSON.stringify(d)}: allowed values: max-age=expireTime, includeSubDomains, preload (RFC 6797 section 6.1)`,
        ),
      );
  }
  return errs;
}

/** The HSTS filter; undefined when there are no directives. */
export function hsts(
  directives: readonly string[],
): ((req: IncomingMessage, res: ServerResponse, next: () => void) => void) | undefined {
  if (directives.length === 0) return undefined;
  const value = directives.join('; ');
  return (_req, res, next) => {
    if (!res.hasHeader('Strict-Transport-Security')) res.setHeader('Strict-Transport-Security', value);
    next();
  };
}
