/**
 * The built-in kinds, and the scheme that serves them. Each kind is one file under `kinds/<group>/<version>/`.
 */
import { Scheme } from '../scheme/scheme';
import { ConfigMapKind } from './core/v1/config-map';

export * from './core/v1/config-map';

/** Every built-in kind, in discovery order. */
export const BUILTIN_KINDS = [ConfigMapKind];

/** A new scheme holding every built-in kind. */
export function builtinScheme(): Scheme {
  return new Scheme().add(...BUILTIN_KINDS);
}
