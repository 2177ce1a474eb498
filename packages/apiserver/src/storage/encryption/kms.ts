/**
 * The `kms` provider (model: apiserver `pkg/storage/value/encrypt/envelope` of Kubernetes 1.21): envelope
 * encryption with a KMS plugin's key. Every write makes a new 32-byte data encryption key (DEK), has the plugin
 * encrypt it (`Encrypt` over gRPC, API `v1beta1`, on a unix socket) and encrypts the value with the DEK (aescbc).
 * The value stored is: the encrypted DEK's length (2 bytes, big endian), the encrypted DEK, the aescbc-sealed value.
 * Reads decrypt the DEK through the plugin (`Decrypt`) unless the DEK is in the cache (`cachesize` entries, least
 * recently used out). Every call has the provider's `timeout`; the plugin's API version is checked once.
 */
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import * as protobuf from 'protobufjs';
import { aescbcTransformer, type PrefixedTransformer } from './providers';

/** The API version of KMS plugins Kubernetes 1.21 speaks. */
export const KMS_API_VERSION = 'v1beta1';
const SERVICE = '/v1beta1.KeyManagementService';

const root = protobuf.Root.fromJSON({
  nested: {
    v1beta1: {
      nested: {
        VersionRequest: { fields: { version: { type: 'string', id: 1 } } },
        VersionResponse: {
          fields: {
            version: { type: 'string', id: 1 },
            runtime_name: { type: 'string', id: 2 },
            runtime_version: { type: 'string', id: 3 },
          },
        },
        DecryptRequest: { fields: { version: { type: 'string', id: 1 }, cipher: { type: 'bytes', id: 2 } } },
        DecryptResponse: { fields: { plain: { type: 'bytes', id: 1 } } },
        EncryptRequest: { fields: { version: { type: 'string', id: 1 }, plain: { type: 'bytes', id: 2 } } },
        EncryptResponse: { fields: { cipher: { type: 'bytes', id: 1 } } },
      },
    },
  },
});

/** The messages of the KMS v1beta1 API, for plugins written against this package (tests, tools). */
export const kmsMessages = {
  VersionRequest: root.lookupType('v1beta1.VersionRequest'),
  VersionResponse: root.lookupType('v1beta1.VersionResponse'),
  DecryptRequest: root.lookupType('v1beta1.DecryptRequest'),
  DecryptResponse: root.lookupType('v1beta1.DecryptResponse'),
  EncryptRequest: root.lookupType('v1beta1.EncryptRequest'),
  EncryptResponse: root.lookupType('v1beta1.EncryptResponse'),
};

/** A KMS plugin's service as a gRPC server implements it (`serveKms`) and as the client calls it. */
export const kmsServiceDefinition: grpc.ServiceDefinition = Object.fromEntries(
  (['Version', 'Decrypt', 'Encrypt'] as const).map((m) => {
    const req = kmsMessages[`${m}Request`];
    const res = kmsMessages[`${m}Response`];
    return [
      m,
      {
        path: `${SERVICE}/${m}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: (v: object) => Buffer.from(req.encode(req.fromObject(v)).finish()),
        requestDeserialize: (b: Buffer) => req.toObject(req.decode(b), { bytes: Buffer, defaults: true }),
        responseSerialize: (v: object) => Buffer.from(res.encode(res.fromObject(v)).finish()),
        responseDeserialize: (b: Buffer) => res.toObject(res.decode(b), { bytes: Buffer, defaults: true }),
      },
    ];
  }),
);

/** A `kms` provider entry of the configuration. */
export interface KmsProviderConfig {
  name: string;
  /** `unix:///path/to/socket`. */
  endpoint: string;
  /** DEKs kept decrypted; default 1000. */
  cachesize: number;
  /** Each call's deadline, ms; default 3 s. */
  timeoutMs: number;
}

/** The client of one KMS plugin. */
export class KmsService {
  private readonly client: grpc.Client;
  private versionChecked?: Promise<void>;

  constructor(private readonly config: KmsProviderConfig) {
    this.client = new grpc.Client(config.endpoint, grpc.credentials.createInsecure());
  }

  async encrypt(plain: Uint8Array): Promise<Buffer> {
    await this.checkVersion();
    const res = await this.call<{ cipher: Buffer }>('Encrypt', { version: KMS_API_VERSION, plain });
    return res.cipher;
  }

  async decrypt(cipher: Uint8Array): Promise<Buffer> {
    await this.checkVersion();
    const res = await this.call<{ plain: Buffer }>('Decrypt', { version: KMS_API_VERSION, cipher });
    return res.plain;
  }

  close(): void {
    this.client.close();
  }

  private checkVersion(): Promise<void> {
    this.versionChecked ??= this.call<{ version: string }>('Version', { version: KMS_API_VERSION }).then((res) => {
      if (res.version !== KMS_API_VERSION) {
        throw new Error(
          `KMS provider ${this.config.name}: api version ${res.version} is not supported, only ${KMS_API_VERSION} is supported now`,
        );
      }
    });
    // A failed check (plugin not up yet) is tried again on the next call.
    this.versionChecked.catch(() => (this.versionChecked = undefined));
    return this.versionChecked;
  }

  private call<T>(method: 'Version' | 'Encrypt' | 'Decrypt', arg: object): Promise<T> {
    const def = kmsServiceDefinition[method]!;
    return new Promise<T>((resolve, reject) => {
      this.client.makeUnaryRequest(
        def.path,
        def.requestSerialize,
        def.responseDeserialize,
        arg,
        { deadline: Date.now() + this.config.timeoutMs },
        (err, res) => {
          if (err) reject(new Error(`KMS provider ${this.config.name}: ${method}: ${err.details || err.message}`));
          else resolve(res as T);
        },
      );
    });
  }
}

/** The `kms` provider's transformer: envelope encryption with DEKs from `service`. */
export function kmsTransformer(prefix: Buffer, service: KmsService, cacheSize: number): PrefixedTransformer {
  /** Sealers by encrypted DEK (base64), least recently used first. */
  const cache = new Map<string, PrefixedTransformer>();
  const remember = (encKey: string, t: PrefixedTransformer): void => {
    cache.delete(encKey);
    cache.set(encKey, t);
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value!);
  };
  return {
    prefix,
    seal: async (data, key) => {
      const dek = randomBytes(32);
      const encDek = await service.encrypt(dek);
      if (encDek.length > 0xffff) throw new Error('the encrypted data encryption key is longer than 65535 bytes');
      const t = aescbcTransformer(Buffer.alloc(0), dek);
      remember(encDek.toString('base64'), t);
      const len = Buffer.alloc(2);
      len.writeUInt16BE(encDek.length);
      return Buffer.concat([len, encDek, await t.seal(data, key)]);
    },
    open: async (data, key) => {
      if (data.length < 2) throw new Error('invalid data encountered by envelope transformer: missing key length');
      const len = (data[0]! << 8) | data[1]!;
      if (data.length < 2 + len) throw new Error('invalid data encountered by envelope transformer: key is truncated');
      const encDek = Buffer.from(data.subarray(2, 2 + len));
      const id = encDek.toString('base64');
      let t = cache.get(id);
      if (!t) {
        const dek = await service.decrypt(encDek);
        if (![16, 24, 32].includes(dek.length)) throw new Error('the KMS plugin returned a key of an invalid length');
        t = aescbcTransformer(Buffer.alloc(0), dek);
      }
      remember(id, t);
      return t.open(data.subarray(2 + len), key);
    },
  };
}
