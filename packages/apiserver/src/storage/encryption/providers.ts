/**
 * Encryption at rest (model: apiserver `pkg/storage/value` of Kubernetes 1.21): the transformers between an encoded
 * object and the bytes the store keeps.
 *
 * Each provider key becomes one prefixed transformer, `platform:enc:<provider>:v1:<key name>:` (Kubernetes'
 * `k8s:enc:` renamed). A resource's transformers form one ordered list: the first writes, any reads the values
 * that carry its prefix, and a value read by another than the first is `stale` (the next write re-encrypts it:
 * key rotation is rewriting every object). `identity` has no prefix: it writes values in clear and reads any value
 * that no other prefix claimed, but never one that carries the encryption prefix.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import nacl from 'tweetnacl';

/** The prefix every encrypted value starts with. */
export const ENCRYPTED_PREFIX = 'platform:enc:';

/** Reads and writes a value as the store keeps it; `key` (the storage key) is authenticated where the cipher can. */
export interface ValueTransformer {
  toStorage(data: Uint8Array, key: string): Promise<Uint8Array>;
  /** The encoded object; `stale` when the value was not written by the transformer that writes now. */
  fromStorage(data: Uint8Array, key: string): Promise<{ data: Uint8Array; stale: boolean }>;
}

/** One provider key: seals and opens values after its prefix. */
export interface PrefixedTransformer {
  /** Bytes the value starts with: `platform:enc:<provider>:v1:<name>:`, empty for identity. */
  prefix: Buffer;
  seal(data: Uint8Array, key: string): Uint8Array | Promise<Uint8Array>;
  open(data: Uint8Array, key: string): Uint8Array | Promise<Uint8Array>;
}

const PREFIX_BYTES = Buffer.from(ENCRYPTED_PREFIX);

/** `identity`: values in clear; refuses to read an encrypted value as clear text. */
export const identityTransformer: PrefixedTransformer = {
  prefix: Buffer.alloc(0),
  seal: (data) => data,
  open: (data) => {
    if (startsWith(data, PREFIX_BYTES)) throw new Error('identity transformer tried to read encrypted data');
    return data;
  },
};

/** The prefix of a provider's key. */
export function providerPrefix(provider: string, name: string): Buffer {
  return Buffer.from(`${ENCRYPTED_PREFIX}${provider}:v1:${name}:`);
}

const CBC_BLOCK = 16;

/** `aescbc`: a random 16-byte IV, then AES-CBC with PKCS#7 padding (no authentication, as Kubernetes). */
export function aescbcTransformer(prefix: Buffer, secret: Buffer): PrefixedTransformer {
  const cipher = `aes-${secret.length * 8}-cbc`;
  return {
    prefix,
    seal: (data) => {
      const iv = randomBytes(CBC_BLOCK);
      const c = createCipheriv(cipher, secret, iv);
      return Buffer.concat([iv, c.update(data), c.final()]);
    },
    open: (data) => {
      if (data.length < CBC_BLOCK) throw new Error('the stored data was shorter than the required size');
      if ((data.length - CBC_BLOCK) % CBC_BLOCK !== 0)
        throw new Error('the stored data is not a multiple of the block size');
      const d = createDecipheriv(cipher, secret, data.subarray(0, CBC_BLOCK));
      return Buffer.concat([d.update(data.subarray(CBC_BLOCK)), d.final()]);
    },
  };
}

const GCM_NONCE = 12;
const GCM_TAG = 16;

/** `aesgcm`: a random 12-byte nonce, AES-GCM over the value with the storage key as additional data, the tag. */
export function aesgcmTransformer(prefix: Buffer, secret: Buffer): PrefixedTransformer {
  const cipher = `aes-${secret.length * 8}-gcm` as 'aes-256-gcm';
  return {
    prefix,
    seal: (data, key) => {
      const nonce = randomBytes(GCM_NONCE);
      const c = createCipheriv(cipher, secret, nonce);
      c.setAAD(Buffer.from(key));
      const body = Buffer.concat([c.update(data), c.final()]);
      return Buffer.concat([nonce, body, c.getAuthTag()]);
    },
    open: (data, key) => {
      if (data.length < GCM_NONCE + GCM_TAG) throw new Error('the stored data was shorter than the required size');
      const d = createDecipheriv(cipher, secret, data.subarray(0, GCM_NONCE));
      d.setAAD(Buffer.from(key));
      d.setAuthTag(data.subarray(data.length - GCM_TAG));
      return Buffer.concat([d.update(data.subarray(GCM_NONCE, data.length - GCM_TAG)), d.final()]);
    },
  };
}

/** `secretbox`: a random 24-byte nonce, then XSalsa20-Poly1305 (NaCl's secretbox). */
export function secretboxTransformer(prefix: Buffer, secret: Buffer): PrefixedTransformer {
  const k = new Uint8Array(secret);
  return {
    prefix,
    seal: (data) => {
      const nonce = randomBytes(nacl.secretbox.nonceLength);
      return Buffer.concat([nonce, nacl.secretbox(data, nonce, k)]);
    },
    open: (data) => {
      const n = nacl.secretbox.nonceLength;
      if (data.length < n + nacl.secretbox.overheadLength)
        throw new Error('the stored data was shorter than the required size');
      const out = nacl.secretbox.open(data.subarray(n), data.subarray(0, n), k);
      if (!out) throw new Error('the stored data could not be decrypted: wrong key or corrupted data');
      return Buffer.from(out.buffer, out.byteOffset, out.length);
    },
  };
}

/** A resource's transformers in order: the first writes, each reads what carries its prefix. */
export class PrefixTransformers implements ValueTransformer {
  constructor(private readonly transformers: PrefixedTransformer[]) {
    if (transformers.length === 0) throw new Error('no transformers');
  }

  async toStorage(data: Uint8Array, key: string): Promise<Uint8Array> {
    const t = this.transformers[0]!;
    const sealed = await t.seal(data, key);
    return t.prefix.length === 0 ? sealed : Buffer.concat([t.prefix, sealed]);
  }

  async fromStorage(data: Uint8Array, key: string): Promise<{ data: Uint8Array; stale: boolean }> {
    let firstError: unknown;
    for (const [i, t] of this.transformers.entries()) {
      if (!startsWith(data, t.prefix)) continue;
      try {
        return { data: await t.open(data.subarray(t.prefix.length), key), stale: i !== 0 };
      } catch (err) {
        // A value identity refused may still be another's (Kubernetes goes on after an unprefixed failure).
        if (t.prefix.length !== 0) throw err;
        firstError ??= err;
      }
    }
    if (firstError) throw firstError;
    throw new Error('no matching prefix found');
  }
}

function startsWith(data: Uint8Array, prefix: Buffer): boolean {
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}
