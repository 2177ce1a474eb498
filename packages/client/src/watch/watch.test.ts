/**
 * Watches over real transports on 127.0.0.1: a chunked HTTP stream and a WebSocket, each fed by a small server that
 * writes frames the way the API server's watch handler does (split across chunks, ERROR events, cut-off streams).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';

import {
  type ApiObject,
  builtinScheme,
  ConfigMapKind,
  isResourceExpired,
  ProtobufCodec,
  protoType,
  WatchEventSchema,
} from '@platform/api';
import { WebSocketServer, type WebSocket } from 'ws';

import { RestClient } from '../rest/rest-client';
import { Clientset } from '../rest/resource-client';
import { isWatchDecodeError } from './decoder';

const codec = new ProtobufCodec(builtinScheme());
const cm = (name: string, rv: string): ApiObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', resourceVersion: rv } }) as ApiObject;
const expired = {
  apiVersion: 'v1',
  kind: 'Status',
  status: 'Failure',
  reason: 'Expired',
  code: 410,
  message: 'too old resource version: 1 (5)',
};
const jsonFrame = (type: string, object: unknown): string => JSON.stringify({ type, object });
const protoFrame = (type: string, object: ApiObject): Buffer => {
  const msg = protoType(WatchEventSchema.$id as string)
    .encode({ type, object: { raw: codec.encode(object) } })
    .finish();
  const head = Buffer.alloc(4);
  head.writeUInt32BE(msg.length, 0);
  return Buffer.concat([head, msg]);
};

let server: Server;
let wss: WebSocketServer;
let url: string;
let onHttp: (req: IncomingMessage, res: ServerResponse) => void;
let onWs: (ws: WebSocket, req: IncomingMessage) => void;

beforeAll(async () => {
  server = createServer((req, res) => onHttp(req, res));
  wss = new WebSocketServer({ server });
  wss.on('connection', (ws, req) => onWs(ws, req));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const c of wss.clients) c.terminate();
  wss.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

function clientset(
  contentType: string,
  watchTransport: 'http' | 'websocket' = 'http',
): { cs: Clientset; rest: RestClient } {
  const rest = new RestClient({ server: url, token: 'tok', contentType, qps: 0 });
  return { cs: new Clientset(rest, { watchTransport }), rest };
}

async function collect(
  it: AsyncIterable<{ type: string; object: ApiObject }>,
): Promise<{ events: string[]; err?: unknown }> {
  const events: string[] = [];
  try {
    for await (const e of it)
      events.push(`${e.type} ${e.object.metadata?.name ?? ''}@${e.object.metadata?.resourceVersion}`);
  } catch (err) {
    return { events, err };
  }
  return { events };
}

describe('chunked HTTP watch', () => {
  it('decodes JSON frames split across chunks, and throws ERROR events as typed errors', async () => {
    let requested = '';
    onHttp = (req, res) => {
      requested = req.url ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = `${jsonFrame('ADDED', cm('a', '4'))}\n${jsonFrame('BOOKMARK', { metadata: { resourceVersion: '5' } })}\n${jsonFrame('ERROR', expired)}\n`;
      res.write(text.slice(0, 17));
      setTimeout(() => res.end(text.slice(17)), 20);
    };
    const { cs, rest } = clientset('application/json');
    const w = await cs.resource(ConfigMapKind, 'default').watch({ resourceVersion: '3' });
    const { events, err } = await collect(w);
    rest.close();
    expect(requested).toMatch(/watch=true/);
    expect(requested).toMatch(/resourceVersion=3/);
    expect(events).toEqual(['ADDED a@4', 'BOOKMARK @5']);
    expect(isResourceExpired(err)).toBe(true);
  });

  it('decodes Protobuf frames and reports a stream cut mid-frame', async () => {
    onHttp = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.platform.protobuf;stream=watch' });
      const f = protoFrame('MODIFIED', cm('b', '9'));
      res.write(Buffer.concat([protoFrame('ADDED', cm('a', '8')), f.subarray(0, 5)]));
      setTimeout(() => res.end(), 20);
    };
    const { cs, rest } = clientset('application/vnd.platform.protobuf');
    const { events, err } = await collect(await cs.resource(ConfigMapKind, 'default').watch());
    rest.close();
    expect(events).toEqual(['ADDED a@8']);
    expect(isWatchDecodeError(err)).toBe(true);
  });

  it('ends quietly when the server ends the stream cleanly, and when stopped by the client', async () => {
    onHttp = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${jsonFrame('ADDED', cm('a', '1'))}\n`);
    };
    const { cs, rest } = clientset('application/json');
    expect(await collect(await cs.resource(ConfigMapKind, 'default').watch())).toEqual({ events: ['ADDED a@1'] });
    onHttp = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${jsonFrame('ADDED', cm('a', '1'))}\n`); // and never ends
    };
    const w = await cs.resource(ConfigMapKind, 'default').watch();
    const seen: string[] = [];
    for await (const e of w) {
      seen.push(e.type);
      w.stop();
    }
    rest.close();
    expect(seen).toEqual(['ADDED']);
  });
});

describe('WebSocket watch', () => {
  it.each(['application/json', 'application/vnd.platform.protobuf'])(
    'decodes %s frames and sends the credentials',
    async (ct) => {
      let seen: { auth?: string; url?: string } = {};
      onWs = (ws, req) => {
        seen = { auth: req.headers.authorization, url: req.url };
        if (ct === 'application/json') {
          ws.send(jsonFrame('ADDED', cm('a', '1')));
          ws.send(jsonFrame('DELETED', cm('a', '2')));
          ws.send(jsonFrame('ERROR', expired));
        } else {
          ws.send(protoFrame('ADDED', cm('a', '1')), { binary: true });
          ws.send(protoFrame('DELETED', cm('a', '2')), { binary: true });
          ws.close(1000);
        }
      };
      const { cs, rest } = clientset(ct, 'websocket');
      const { events, err } = await collect(await cs.resource(ConfigMapKind, 'default').watch());
      rest.close();
      expect(seen.auth).toBe('Bearer tok');
      expect(seen.url).toMatch(/watch=true/);
      expect(events).toEqual(['ADDED a@1', 'DELETED a@2']);
      if (ct === 'application/json') expect(isResourceExpired(err)).toBe(true);
      else expect(err).toBeUndefined();
    },
  );
});
