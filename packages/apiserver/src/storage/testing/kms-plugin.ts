import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { KMS_API_VERSION, kmsServiceDefinition } from '../encryption/kms';

/** A running test KMS plugin: how often it was called, and how to stop it. */
export interface KmsPlugin {
  calls: { encrypt: number; decrypt: number };
  stop(): Promise<void>;
}

/** A KMS plugin on a unix socket: AES-256-GCM with its master key (a new one by default), counting its calls. */
export async function startKmsPlugin(
  socket: string,
  version = KMS_API_VERSION,
  master: Buffer = randomBytes(32),
): Promise<KmsPlugin> {
  rmSync(socket, { force: true });
  const calls = { encrypt: 0, decrypt: 0 };
  const server = new grpc.Server();
  server.addService(kmsServiceDefinition, {
    Version: (_c: unknown, cb: grpc.sendUnaryData<object>) =>
      cb(null, { version, runtime_name: 'test-kms', runtime_version: '0.1' }),
    Encrypt: (c: grpc.ServerUnaryCall<{ plain: Buffer }, object>, cb: grpc.sendUnaryData<object>) => {
      calls.encrypt++;
      const iv = randomBytes(12);
      const e = createCipheriv('aes-256-gcm', master, iv);
      const body = Buffer.concat([e.update(c.request.plain), e.final()]);
      cb(null, { cipher: Buffer.concat([iv, body, e.getAuthTag()]) });
    },
    Decrypt: (c: grpc.ServerUnaryCall<{ cipher: Buffer }, object>, cb: grpc.sendUnaryData<object>) => {
      calls.decrypt++;
      const b = c.request.cipher;
      try {
        const d = createDecipheriv('aes-256-gcm', master, b.subarray(0, 12));
        d.setAuthTag(b.subarray(b.length - 16));
        cb(null, { plain: Buffer.concat([d.update(b.subarray(12, b.length - 16)), d.final()]) });
      } catch (err) {
        cb({ code: grpc.status.INVALID_ARGUMENT, details: (err as Error).message });
      }
    },
  });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return { calls, stop: () => new Promise<void>((r) => server.tryShutdown(() => r())) };
}
