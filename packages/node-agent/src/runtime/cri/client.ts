/**
 * A typed CRI client: the RuntimeService and ImageService of `runtime.v1` (when the runtime serves it) or
 * `runtime.v1alpha2` (containerd 1.6's), over gRPC on a unix socket, loaded at run time from the stripped
 * api.proto files beside this module. Every call has a deadline (`--runtime-request-timeout`), except image pulls,
 * which have their own (none by default, as the kubelet's).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protobuf from 'protobufjs';
import type * as T from './types';

/** Which CRI API to speak. */
export type CriApiVersion = 'v1' | 'v1alpha2';

/** Options of `CriClient.connect`. */
export interface CriClientOptions {
  /** `unix:///path/to/containerd.sock` (or a bare absolute path). */
  endpoint: string;
  /** The image service's endpoint; the runtime's when unset. */
  imageEndpoint?: string;
  /** Deadline of every call but PullImage, ms (`--runtime-request-timeout`, 2 minutes by default). */
  timeoutMs?: number;
  /** Deadline of PullImage, ms; 0 (the default) for none. */
  pullTimeoutMs?: number;
  /** Force an API version; by default v1 when served, else v1alpha2. */
  apiVersion?: CriApiVersion;
  /** How long `connect` waits for the socket to answer, ms. Default: timeoutMs. */
  connectTimeoutMs?: number;
  /** Told of every call once it ends: its method, its wall time (ms, from the agent's side) and its gRPC status. */
  onCall?: CallObserver;
}

/** See `CriClientOptions.onCall`. */
export type CallObserver = (rpc: string, ms: number, code: grpc.status) => void;

/** A failed CRI call: the gRPC status code and the runtime's message. */
export class CriError extends Error {
  constructor(
    readonly rpc: string,
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(`${rpc}: ${grpc.status[code] ?? code}: ${details}`);
    this.name = 'CriError';
  }
  get notFound(): boolean {
    return this.code === grpc.status.NOT_FOUND;
  }
}

/** A channel to a CRI service and its methods. */
interface Service {
  client: grpc.Client;
  methods: ServiceCodecs;
}

/** Per-call options: an AbortSignal cancels the call. */
export interface CallOpts {
  signal?: AbortSignal;
}

const protoRoots = [
  join(__dirname, 'proto'),
  // Running from lib/: the proto files stay in src/.
  resolve(__dirname, '..', '..', '..', 'src', 'runtime', 'cri', 'proto'),
];

function protoFile(version: CriApiVersion): string {
  for (const root of protoRoots) {
    const f = join(root, version, 'api.proto');
    if (existsSync(f)) return f;
  }
  throw new Error(`CRI ${version} api.proto not found under ${protoRoots.join(' or ')}`);
}

/** How a method's messages go on and come off the wire. */
interface MethodCodec {
  path: string;
  serialize(req: unknown): Buffer;
  deserialize(buf: Buffer): unknown;
}

/** The methods of one CRI service, by name. */
type ServiceCodecs = Map<string, MethodCodec>;

/**
 * The objects messages are read into, as @grpc/proto-loader's `keepCase`, `longs: String`, `enums: String`,
 * `defaults: true`, `oneofs: true` give them (types.ts is written against that form).
 */
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

const services = new Map<CriApiVersion, Record<'RuntimeService' | 'ImageService', ServiceCodecs>>();

/**
 * The codecs of the CRI services of `version`, from its api.proto parsed by protobufjs (field names as written).
 * What grpc-js needs of a method is its path and two functions; @grpc/proto-loader's package definition also holds
 * a descriptor object of every message and a FileDescriptorProto, which nothing here reads.
 */
function loadServices(version: CriApiVersion): Record<'RuntimeService' | 'ImageService', ServiceCodecs> {
  let s = services.get(version);
  if (!s) {
    const root = new protobuf.Root();
    root.loadSync(protoFile(version), { keepCase: true });
    root.resolveAll();
    const codecs = (name: string): ServiceCodecs => {
      const svc = root.lookupService(`runtime.${version}.${name}`);
      const out: ServiceCodecs = new Map();
      for (const m of Object.values(svc.methods)) {
        const req = m.resolvedRequestType!;
        const res = m.resolvedResponseType!;
        out.set(m.name, {
          path: `/runtime.${version}.${name}/${m.name}`,
          serialize: (obj) => Buffer.from(req.encode(req.fromObject(obj as Record<string, unknown>)).finish()),
          deserialize: (buf) => res.toObject(res.decode(buf), TO_OBJECT),
        });
      }
      return out;
    };
    s = { RuntimeService: codecs('RuntimeService'), ImageService: codecs('ImageService') };
    services.set(version, s);
  }
  return s;
}

/** `unix:///x`, `unix:/x` or `/x` as a grpc-js target. */
export function grpcTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return `unix://${endpoint.slice('unix://'.length)}`;
  if (endpoint.startsWith('unix:')) return `unix://${endpoint.slice('unix:'.length)}`;
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  throw new Error(`unsupported CRI endpoint ${JSON.stringify(endpoint)}: only unix sockets (unix:///path)`);
}

const channelOptions: grpc.ChannelOptions = {
  // As the kubelet: 16 MiB responses (ListContainers on a full node).
  'grpc.max_receive_message_length': 16 * 1024 * 1024,
  'grpc.max_send_message_length': 16 * 1024 * 1024,
};

/** A connected CRI client. */
export class CriClient {
  private constructor(
    readonly apiVersion: CriApiVersion,
    private readonly runtime: Service,
    private readonly images: Service,
    private readonly timeoutMs: number,
    private readonly pullTimeoutMs: number,
    private readonly onCall?: CallObserver,
  ) {}

  /** Connects and settles the API version (v1 when the runtime answers v1's Version, else v1alpha2). */
  static async connect(options: CriClientOptions): Promise<CriClient> {
    const timeoutMs = options.timeoutMs ?? 120_000;
    const connectTimeoutMs = options.connectTimeoutMs ?? timeoutMs;
    const target = grpcTarget(options.endpoint);
    const imageTarget = grpcTarget(options.imageEndpoint ?? options.endpoint);
    const make = (version: CriApiVersion): CriClient => {
      const codecs = loadServices(version);
      const runtime = {
        client: new grpc.Client(target, grpc.credentials.createInsecure(), channelOptions),
        methods: codecs.RuntimeService,
      };
      const images = {
        client: new grpc.Client(imageTarget, grpc.credentials.createInsecure(), channelOptions),
        methods: codecs.ImageService,
      };
      return new CriClient(version, runtime, images, timeoutMs, options.pullTimeoutMs ?? 0, options.onCall);
    };
    const candidates: CriApiVersion[] = options.apiVersion ? [options.apiVersion] : ['v1', 'v1alpha2'];
    let last: unknown;
    for (const version of candidates) {
      const client = make(version);
      try {
        await client.waitForReady(connectTimeoutMs);
        await client.version();
        return client;
      } catch (err) {
        client.close();
        last = err;
        if (!(err instanceof CriError && err.code === grpc.status.UNIMPLEMENTED)) break;
      }
    }
    throw last instanceof Error ? last : new Error(String(last));
  }

  private waitForReady(ms: number): Promise<void> {
    return new Promise((resolvePromise, reject) => {
      this.runtime.client.waitForReady(Date.now() + ms, (err) => {
        if (err) reject(new CriError('connect', grpc.status.UNAVAILABLE, err.message));
        else resolvePromise();
      });
    });
  }

  private call<R>(
    service: Service,
    rpc: string,
    req: object,
    o: CallOpts = {},
    timeoutMs = this.timeoutMs,
  ): Promise<R> {
    return new Promise((resolvePromise, reject) => {
      const signal = o.signal;
      if (signal?.aborted) {
        reject(new CriError(rpc, grpc.status.CANCELLED, 'cancelled before the call'));
        return;
      }
      const opts: grpc.CallOptions = timeoutMs > 0 ? { deadline: Date.now() + timeoutMs } : {};
      const method = service.methods.get(rpc);
      if (!method) {
        reject(new CriError(rpc, grpc.status.UNIMPLEMENTED, `no method ${rpc} in CRI ${this.apiVersion}`));
        return;
      }
      const onAbort = (): void => call.cancel();
      const started = this.onCall ? performance.now() : 0;
      const call = service.client.makeUnaryRequest(
        method.path,
        method.serialize,
        method.deserialize,
        req,
        opts,
        (err: grpc.ServiceError | null, res?: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          this.onCall?.(rpc, performance.now() - started, err ? err.code : grpc.status.OK);
          if (err) reject(new CriError(rpc, err.code, err.details || err.message));
          else resolvePromise(res as R);
        },
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  close(): void {
    this.runtime.client.close();
    this.images.client.close();
  }

  // ---- RuntimeService ----

  version(o: CallOpts = {}): Promise<T.VersionResponse> {
    return this.call(this.runtime, 'Version', { version: '0.1.0' }, o);
  }

  status(verbose = false, o: CallOpts = {}): Promise<T.StatusResponse> {
    return this.call(this.runtime, 'Status', { verbose }, o);
  }

  async runPodSandbox(config: T.PodSandboxConfig, runtimeHandler = '', o: CallOpts = {}): Promise<string> {
    const res = await this.call<{ pod_sandbox_id: string }>(
      this.runtime,
      'RunPodSandbox',
      {
        config,
        runtime_handler: runtimeHandler,
      },
      o,
    );
    return res.pod_sandbox_id;
  }

  async stopPodSandbox(podSandboxId: string, o: CallOpts = {}): Promise<void> {
    await this.call(this.runtime, 'StopPodSandbox', { pod_sandbox_id: podSandboxId }, o);
  }

  async removePodSandbox(podSandboxId: string, o: CallOpts = {}): Promise<void> {
    await this.call(this.runtime, 'RemovePodSandbox', { pod_sandbox_id: podSandboxId }, o);
  }

  podSandboxStatus(podSandboxId: string, verbose = false, o: CallOpts = {}): Promise<T.PodSandboxStatusResponse> {
    return this.call(this.runtime, 'PodSandboxStatus', { pod_sandbox_id: podSandboxId, verbose }, o);
  }

  async listPodSandbox(filter?: T.PodSandboxFilter, o: CallOpts = {}): Promise<T.PodSandbox[]> {
    const res = await this.call<{ items: T.PodSandbox[] }>(this.runtime, 'ListPodSandbox', { filter }, o);
    return res.items;
  }

  async createContainer(
    podSandboxId: string,
    config: T.ContainerConfig,
    sandboxConfig: T.PodSandboxConfig,
    o: CallOpts = {},
  ): Promise<string> {
    const res = await this.call<{ container_id: string }>(
      this.runtime,
      'CreateContainer',
      {
        pod_sandbox_id: podSandboxId,
        config,
        sandbox_config: sandboxConfig,
      },
      o,
    );
    return res.container_id;
  }

  async startContainer(containerId: string, o: CallOpts = {}): Promise<void> {
    await this.call(this.runtime, 'StartContainer', { container_id: containerId }, o);
  }

  /** Stops with SIGTERM, then SIGKILL after `timeoutSeconds`. The call's deadline is stretched by that much. */
  async stopContainer(containerId: string, timeoutSeconds: number, o: CallOpts = {}): Promise<void> {
    await this.call(
      this.runtime,
      'StopContainer',
      { container_id: containerId, timeout: timeoutSeconds },
      o,
      this.timeoutMs > 0 ? this.timeoutMs + timeoutSeconds * 1000 : 0,
    );
  }

  async removeContainer(containerId: string, o: CallOpts = {}): Promise<void> {
    await this.call(this.runtime, 'RemoveContainer', { container_id: containerId }, o);
  }

  async listContainers(filter?: T.ContainerFilter, o: CallOpts = {}): Promise<T.Container[]> {
    const res = await this.call<{ containers: T.Container[] }>(this.runtime, 'ListContainers', { filter }, o);
    return res.containers;
  }

  containerStatus(containerId: string, verbose = false, o: CallOpts = {}): Promise<T.ContainerStatusResponse> {
    return this.call(this.runtime, 'ContainerStatus', { container_id: containerId, verbose }, o);
  }

  /** Runs a command in a container and returns its output; `timeoutSeconds` 0 for none (the call's deadline holds). */
  execSync(containerId: string, cmd: string[], timeoutSeconds = 0, o: CallOpts = {}): Promise<T.ExecSyncResponse> {
    return this.call(
      this.runtime,
      'ExecSync',
      { container_id: containerId, cmd, timeout: timeoutSeconds },
      o,
      this.timeoutMs > 0 && timeoutSeconds > 0
        ? Math.max(this.timeoutMs, timeoutSeconds * 1000 + 5000)
        : this.timeoutMs,
    );
  }

  /** The URL of the runtime's streaming server for this exec. */
  async exec(req: T.ExecRequest, o: CallOpts = {}): Promise<string> {
    return (await this.call<{ url: string }>(this.runtime, 'Exec', req, o)).url;
  }

  async attach(req: T.AttachRequest, o: CallOpts = {}): Promise<string> {
    return (await this.call<{ url: string }>(this.runtime, 'Attach', req, o)).url;
  }

  async portForward(req: T.PortForwardRequest, o: CallOpts = {}): Promise<string> {
    return (await this.call<{ url: string }>(this.runtime, 'PortForward', req, o)).url;
  }

  async updateContainerResources(
    containerId: string,
    linux: T.LinuxContainerResources,
    o: CallOpts = {},
  ): Promise<void> {
    await this.call(this.runtime, 'UpdateContainerResources', { container_id: containerId, linux }, o);
  }

  /** Asks the runtime to reopen a container's log file (after the agent rotated it). */
  async reopenContainerLog(containerId: string, o: CallOpts = {}): Promise<void> {
    await this.call(this.runtime, 'ReopenContainerLog', { container_id: containerId }, o);
  }

  async listContainerStats(
    filter?: { id?: string; pod_sandbox_id?: string; label_selector?: Record<string, string> },
    o: CallOpts = {},
  ): Promise<T.ContainerStats[]> {
    const res = await this.call<{ stats: T.ContainerStats[] }>(this.runtime, 'ListContainerStats', { filter }, o);
    return res.stats;
  }

  async updateRuntimeConfig(podCidr: string, o: CallOpts = {}): Promise<void> {
    await this.call(
      this.runtime,
      'UpdateRuntimeConfig',
      { runtime_config: { network_config: { pod_cidr: podCidr } } },
      o,
    );
  }

  // ---- ImageService ----

  async listImages(filter?: { image?: T.ImageSpec }, o: CallOpts = {}): Promise<T.Image[]> {
    const res = await this.call<{ images: T.Image[] }>(this.images, 'ListImages', { filter }, o);
    return res.images;
  }

  /** The image, or null when it is not present. */
  async imageStatus(image: string, o: CallOpts = {}): Promise<T.Image | null> {
    const res = await this.call<T.ImageStatusResponse>(this.images, 'ImageStatus', { image: { image } }, o);
    return res.image && res.image.id ? res.image : null;
  }

  /** Pulls from a registry (always: ask `imageStatus` first). Returns the image reference. */
  async pullImage(
    image: string,
    auth?: T.AuthConfig,
    sandboxConfig?: T.PodSandboxConfig,
    o: CallOpts = {},
  ): Promise<string> {
    const res = await this.call<{ image_ref: string }>(
      this.images,
      'PullImage',
      { image: { image }, auth, sandbox_config: sandboxConfig },
      o,
      this.pullTimeoutMs,
    );
    return res.image_ref;
  }

  async removeImage(image: string, o: CallOpts = {}): Promise<void> {
    await this.call(this.images, 'RemoveImage', { image: { image } }, o);
  }

  async imageFsInfo(o: CallOpts = {}): Promise<T.FilesystemUsage[]> {
    return (await this.call<T.ImageFsInfoResponse>(this.images, 'ImageFsInfo', {}, o)).image_filesystems;
  }
}
