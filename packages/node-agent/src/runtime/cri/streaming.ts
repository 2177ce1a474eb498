/**
 * A client of a CRI runtime's streaming server (the URLs of Exec/Attach): a WebSocket with the
 * `v4.channel.k8s.io` channel protocol, as containerd's streaming server speaks it. Each binary message is one
 * channel byte and data: 0 stdin, 1 stdout, 2 stderr, 3 the error channel (a JSON `Status` at the end: `Success`,
 * or `Failure` with the exit code among its causes), 4 terminal resize (`{"Width":w,"Height":h}`). With this the
 * `remote` runtime serves `exec` and `attach` on plain streams, as the builtin runtime does, so the agent's server
 * treats both alike.
 */
import { WebSocket } from 'ws';
import type { StreamOptions } from '../runtime';

/** The outcome of a streaming session: the command's exit code (0 on success, -1 when the runtime failed). */
export interface StreamResult {
  exitCode: number;
  message?: string;
}

interface V4Status {
  status?: string;
  message?: string;
  reason?: string;
  details?: { causes?: Array<{ reason?: string; message?: string }> };
}

/** Parses the error channel's final Status into an exit code. */
export function exitCodeOf(status: string): StreamResult {
  if (!status.trim()) return { exitCode: 0 };
  let s: V4Status;
  try {
    s = JSON.parse(status) as V4Status;
  } catch {
    return { exitCode: -1, message: status };
  }
  if (s.status === 'Success') return { exitCode: 0 };
  const cause = s.details?.causes?.find((c) => c.reason === 'ExitCode');
  if (cause?.message !== undefined && /^\d+$/.test(cause.message)) {
    return { exitCode: Number(cause.message), ...(s.message ? { message: s.message } : {}) };
  }
  return { exitCode: -1, message: s.message ?? status };
}

/**
 * Connects to a streaming URL (http(s) or ws(s)) and pumps the streams until the session ends (or `signal` aborts
 * it). `tls` passes TLS options for a wss:// server (the agent's own, in tests).
 */
export function streamSession(
  url: string,
  streams: StreamOptions,
  tls: { rejectUnauthorized?: boolean; ca?: string | Buffer } = {},
): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), ['v4.channel.k8s.io'], { perMessageDeflate: false, ...tls });
    let errorChannel = '';
    let settled = false;
    const finish = (r: StreamResult | Error): void => {
      if (settled) return;
      settled = true;
      streams.signal?.removeEventListener('abort', onAbort);
      streams.stdin?.removeListener('data', onStdin);
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    const onAbort = (): void => {
      ws.close();
    };
    const onStdin = (chunk: Buffer | string): void => {
      if (ws.readyState !== WebSocket.OPEN) return;
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      ws.send(Buffer.concat([Buffer.from([0]), b]));
    };
    streams.signal?.addEventListener('abort', onAbort, { once: true });
    ws.on('open', () => {
      streams.stdin?.on('data', onStdin);
      if (streams.tty && streams.resize) {
        void (async () => {
          for await (const size of streams.resize!) {
            if (ws.readyState !== WebSocket.OPEN) break;
            const msg = JSON.stringify({ Width: size.width, Height: size.height });
            ws.send(Buffer.concat([Buffer.from([4]), Buffer.from(msg)]));
          }
        })().catch(() => undefined);
      }
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const b = isBinary ? data : Buffer.from(data.toString());
      if (b.length === 0) return;
      const ch = b[0];
      const payload = b.subarray(1);
      if (payload.length === 0) return; // the server opens each channel with an empty frame
      if (ch === 1) streams.stdout?.write(payload);
      else if (ch === 2) streams.stderr?.write(payload);
      else if (ch === 3) errorChannel += payload.toString();
    });
    ws.on('close', () => finish(exitCodeOf(errorChannel)));
    ws.on('error', (err) => finish(err));
  });
}

/**
 * Pumps one port-forward connection over a streaming URL (its `port` query names the port): what `stream` gives
 * goes out on channel 0, what comes back on channel 0 is written to it, and text on channel 1 is the runtime's
 * error. The first message of each channel only repeats the port. Resolves when either side closes.
 */
export function forwardSession(url: string, stream: NodeJS.ReadWriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), ['v4.channel.k8s.io'], { perMessageDeflate: false });
    const opened = new Set<number>();
    let error = '';
    const onData = (chunk: Buffer | string): void => {
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(Buffer.concat([Buffer.from([0]), Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)]));
    };
    const onEnd = (): void => ws.close();
    ws.on('open', () => {
      stream.on('data', onData);
      stream.once('end', onEnd);
    });
    ws.on('message', (data: Buffer) => {
      const ch = data[0]!;
      const payload = data.subarray(1);
      if (!opened.has(ch)) {
        opened.add(ch);
        return;
      }
      if (ch === 0) stream.write(payload);
      else if (ch === 1) error += payload.toString();
    });
    ws.on('close', () => {
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.end();
      if (error) reject(new Error(error));
      else resolve();
    });
    ws.on('error', (err) => reject(err));
  });
}
