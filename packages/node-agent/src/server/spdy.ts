/**
 * The server side of SPDY/3.1 as kubectl (1.20 and earlier) speaks it for `exec`, `attach` and `port-forward`
 * (model: `moby/spdystream`, which Kubernetes' `httpstream/spdy` wraps): after an HTTP upgrade to `SPDY/3.1`, the
 * client opens one stream per channel (SYN_STREAM, its kind in the `streamtype` header), the server accepts each
 * (SYN_REPLY), and both sides send DATA frames until FIN. Only what those clients use is implemented: no server
 * push, no priorities; flow control windows are not enforced (spdystream does not enforce them either).
 *
 * Header blocks are zlib streams (one per direction) primed with the protocol's dictionary. What the client sends is
 * inflated with it; what this side sends is written as stored (uncompressed) deflate blocks, which need no
 * dictionary and keep the stream valid for the client's inflater.
 */
import { type Duplex } from 'node:stream';
import { constants as zlibConstants, inflateSync } from 'node:zlib';

/** The frame types of SPDY/3 control frames. */
const SYN_STREAM = 1;
const SYN_REPLY = 2;
const RST_STREAM = 3;
const PING = 6;
const GOAWAY = 7;
const FLAG_FIN = 0x01;

/**
 * The zlib dictionary of SPDY/3 header blocks (draft 3, section 2.6.10.1): header names and values as
 * length-prefixed strings, then common values run together.
 */
const HEADER_DICTIONARY: Buffer = (() => {
  const names = [
    'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding',
    'accept-language', 'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection',
    'content-base', 'content-encoding', 'content-language', 'content-length', 'content-location', 'content-md5',
    'content-range', 'content-type', 'date', 'etag', 'expect', 'expires', 'from', 'host', 'if-match',
    'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since', 'last-modified', 'location',
    'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer', 'retry-after',
    'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
    'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public', 'set-cookie',
    'keep-alive', 'origin',
  ]; // prettier-ignore
  const tail =
    '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
    '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
    '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
    'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
    'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
    'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';
  const parts: Buffer[] = [];
  for (const n of names) {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(n.length);
    parts.push(len, Buffer.from(n, 'latin1'));
  }
  parts.push(Buffer.from(tail, 'latin1'));
  return Buffer.concat(parts);
})();

/** One stream the client opened. */
export class SpdyStream {
  /** Data received; `end` when the client half-closed (FIN) or reset the stream. */
  private readonly listeners: { data: ((b: Buffer) => void)[]; end: (() => void)[] } = { data: [], end: [] };
  private readonly pending: Buffer[] = [];
  remoteClosed = false;
  private localClosed = false;

  constructor(
    private readonly conn: SpdyConnection,
    readonly id: number,
    /** The stream's headers, names lowercased. */
    readonly headers: Record<string, string>,
  ) {}

  /** Calls `f` with each chunk received (chunks that came before are delivered at once). */
  onData(f: (b: Buffer) => void): void {
    this.listeners.data.push(f);
    for (const b of this.pending.splice(0)) f(b);
  }

  /** Calls `f` once the client closed its side (at once if it already did). */
  onEnd(f: () => void): void {
    if (this.remoteClosed) f();
    else this.listeners.end.push(f);
  }

  /** Sends data on the stream. */
  write(b: Buffer | string): void {
    if (this.localClosed) return;
    const data = Buffer.isBuffer(b) ? b : Buffer.from(b);
    // DATA frames carry at most 2^24-1 bytes; stay well below.
    for (let i = 0; i < data.length; i += 32 * 1024) this.conn.sendData(this.id, data.subarray(i, i + 32 * 1024), 0);
  }

  /** Half-closes this side (FIN). */
  end(b?: Buffer | string): void {
    if (b !== undefined) this.write(b);
    if (this.localClosed) return;
    this.localClosed = true;
    this.conn.sendData(this.id, Buffer.alloc(0), FLAG_FIN);
  }

  /** @internal */
  received(b: Buffer): void {
    if (this.listeners.data.length === 0) this.pending.push(b);
    for (const f of this.listeners.data) f(b);
  }

  /** @internal */
  closedByRemote(): void {
    if (this.remoteClosed) return;
    this.remoteClosed = true;
    for (const f of this.listeners.end.splice(0)) f();
  }
}

/** A SPDY/3.1 connection on an upgraded socket, server side. */
export class SpdyConnection {
  private buffer: Buffer = Buffer.alloc(0);
  /** Every compressed header block received so far: one zlib stream, inflated whole each time (blocks are few). */
  private compressed: Buffer = Buffer.alloc(0);
  private inflated = 0;
  private headerStreamStarted = false;
  private readonly streams = new Map<number, SpdyStream>();
  private closed = false;
  private readonly closeListeners: (() => void)[] = [];

  constructor(
    private readonly socket: Duplex,
    /** Called for each stream the client opens, after it was accepted. */
    private readonly onStream: (s: SpdyStream) => void,
  ) {
    socket.on('data', (b: Buffer) => this.receive(b));
    socket.on('close', () => this.shutdown());
    socket.on('error', () => this.shutdown());
  }

  /** Calls `f` when the connection is gone. */
  onClose(f: () => void): void {
    if (this.closed) f();
    else this.closeListeners.push(f);
  }

  /** Says goodbye and closes the socket once what was written is flushed. */
  close(): void {
    if (this.closed) return;
    const goaway = Buffer.alloc(8);
    goaway.writeUInt32BE(0x7fffffff & Math.max(0, ...this.streams.keys()), 0);
    this.sendControl(GOAWAY, 0, goaway);
    this.socket.end();
    this.shutdown();
  }

  private shutdown(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.closedByRemote();
    for (const f of this.closeListeners.splice(0)) f();
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    try {
      while (this.buffer.length >= 8) {
        const length = this.buffer.readUInt32BE(4) & 0xffffff;
        if (this.buffer.length < 8 + length) return;
        const frame = this.buffer.subarray(0, 8 + length);
        this.buffer = this.buffer.subarray(8 + length);
        this.frame(frame);
      }
    } catch {
      // A frame this side cannot read: the connection is unusable.
      this.socket.destroy();
      this.shutdown();
    }
  }

  private frame(f: Buffer): void {
    const flags = f[4]!;
    const body = f.subarray(8);
    if ((f[0]! & 0x80) === 0) {
      const s = this.streams.get(f.readUInt32BE(0) & 0x7fffffff);
      if (!s) return;
      if (body.length) s.received(Buffer.from(body));
      if (flags & FLAG_FIN) s.closedByRemote();
      return;
    }
    const type = f.readUInt16BE(2);
    if (type === SYN_STREAM) {
      const id = body.readUInt32BE(0) & 0x7fffffff;
      const headers = this.readHeaders(body.subarray(10));
      const s = new SpdyStream(this, id, headers);
      this.streams.set(id, s);
      this.sendControl(SYN_REPLY, 0, Buffer.concat([body.subarray(0, 4), this.headerBlock()]));
      if (flags & FLAG_FIN) s.closedByRemote();
      this.onStream(s);
    } else if (type === RST_STREAM) {
      this.streams.get(body.readUInt32BE(0) & 0x7fffffff)?.closedByRemote();
    } else if (type === PING) {
      this.sendControl(PING, 0, body);
    } else if (type === GOAWAY) {
      this.close();
    }
    // SETTINGS, WINDOW_UPDATE and HEADERS change nothing this side does.
  }

  /** Inflates one header block (the zlib stream continues from the previous ones) into name → value. */
  private readHeaders(block: Buffer): Record<string, string> {
    this.compressed = Buffer.concat([this.compressed, block]);
    const all = inflateSync(this.compressed, {
      dictionary: HEADER_DICTIONARY,
      finishFlush: zlibConstants.Z_SYNC_FLUSH,
    });
    const plain = all.subarray(this.inflated);
    this.inflated = all.length;
    const headers: Record<string, string> = {};
    const n = plain.readUInt32BE(0);
    let at = 4;
    const str = (): string => {
      const len = plain.readUInt32BE(at);
      const s = plain.subarray(at + 4, at + 4 + len).toString('utf8');
      at += 4 + len;
      return s;
    };
    for (let i = 0; i < n; i++) {
      const name = str().toLowerCase();
      // Several values of one name are separated by NUL.
      headers[name] = str().split('\0')[0] ?? '';
    }
    return headers;
  }

  /** An empty header block, as a stored deflate block continuing this side's zlib stream. */
  private headerBlock(): Buffer {
    const plain = Buffer.alloc(4); // zero headers
    const stored = Buffer.alloc(5);
    stored[0] = 0; // not final, stored
    stored.writeUInt16LE(plain.length, 1);
    stored.writeUInt16LE(~plain.length & 0xffff, 3);
    const start = this.headerStreamStarted ? Buffer.alloc(0) : Buffer.from([0x78, 0x01]);
    this.headerStreamStarted = true;
    // An empty stored block after it, as a zlib sync flush ends: Go's inflater hands over what it has when it meets
    // one, instead of reading on for the next block (which is in no frame yet) and failing.
    return Buffer.concat([start, stored, plain, Buffer.from([0, 0, 0, 0xff, 0xff])]);
  }

  private sendControl(type: number, flags: number, body: Buffer): void {
    if (this.closed) return;
    const h = Buffer.alloc(8);
    h.writeUInt16BE(0x8003, 0);
    h.writeUInt16BE(type, 2);
    h.writeUInt32BE(body.length, 4);
    h[4] = flags;
    this.socket.write(Buffer.concat([h, body]));
  }

  /** @internal */
  sendData(id: number, data: Buffer, flags: number): void {
    if (this.closed) return;
    const h = Buffer.alloc(8);
    h.writeUInt32BE(id & 0x7fffffff, 0);
    h.writeUInt32BE(data.length, 4);
    h[4] = flags;
    this.socket.write(data.length ? Buffer.concat([h, data]) : h);
  }
}
