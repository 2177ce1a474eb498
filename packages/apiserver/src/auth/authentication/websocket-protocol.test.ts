import { type IncomingMessage } from 'node:http';

import { type TokenAuthenticator } from './bearer';
import { parseTokenFile, tokenFileAuthenticator } from './token-file';
import { webSocketProtocolAuthenticator, webSocketProtocolToken } from './websocket-protocol';

const UPGRADE = { upgrade: 'websocket', connection: 'Upgrade' };
const enc = (token: string): string => Buffer.from(token).toString('base64url');
const bearer = (token: string, prefix = 'base64url.bearer.authorization.platform.'): string => prefix + enc(token);

function request(headers: Record<string, string>): IncomingMessage {
  return { headers: { ...headers } } as unknown as IncomingMessage;
}

describe('webSocketProtocolToken', () => {
  it.each([
    ['the platform prefix', `${bearer('tok')}, base64.channel.platform`, 'tok', ['base64.channel.platform']],
    [
      'the Kubernetes prefix',
      `base64.channel.k8s.io,${bearer('tok', 'base64url.bearer.authorization.k8s.io.')}`,
      'tok',
      ['base64.channel.k8s.io'],
    ],
    ['a token that needs the URL alphabet', `${bearer('a?>~')}, v4.channel.k8s.io`, 'a?>~', ['v4.channel.k8s.io']],
  ])('reads a token with %s', (_what, protocols, token, others) => {
    expect(webSocketProtocolToken(request({ ...UPGRADE, 'sec-websocket-protocol': protocols }))).toEqual({
      token,
      others,
    });
  });

  it.each([
    ['a plain request', { 'sec-websocket-protocol': `${bearer('tok')}, x` }],
    ['another upgrade', { upgrade: 'h2c', connection: 'Upgrade', 'sec-websocket-protocol': `${bearer('tok')}, x` }],
    ['Upgrade without the Connection token', { upgrade: 'websocket', 'sec-websocket-protocol': `${bearer('tok')},x` }],
    ['no subprotocol', UPGRADE],
    ['no bearer subprotocol', { ...UPGRADE, 'sec-websocket-protocol': 'base64.channel.k8s.io' }],
  ])('has no opinion on %s', (_what, headers) => {
    expect(webSocketProtocolToken(request(headers))).toBeUndefined();
  });

  it.each([
    ['two bearer entries', `${bearer('a')}, ${bearer('b')}, x`, 'multiple'],
    ['one of each spelling', `${bearer('a')}, ${bearer('a', 'base64url.bearer.authorization.k8s.io.')}, x`, 'multiple'],
    ['an empty token', 'base64url.bearer.authorization.platform., x', 'empty'],
    ['padding', `${bearer('ab')}==, x`, 'encoding'],
    ['the standard alphabet', 'base64url.bearer.authorization.platform.a+b/, x', 'encoding'],
    ['an impossible length', 'base64url.bearer.authorization.platform.abcde, x', 'encoding'],
    [
      'bytes that are not UTF-8',
      `base64url.bearer.authorization.platform.${Buffer.from([0xff]).toString('base64url')}, x`,
      /authorization token$/,
    ],
    ['no other subprotocol', bearer('tok'), 'missing additional subprotocol'],
  ])('refuses %s', (_what, protocols, message) => {
    expect(() => webSocketProtocolToken(request({ ...UPGRADE, 'sec-websocket-protocol': protocols }))).toThrow(message);
  });
});

describe('webSocketProtocolAuthenticator', () => {
  const tokens: TokenAuthenticator = tokenFileAuthenticator(parseTokenFile('tok,alice,1,dev\n', 'tokens'));
  const authenticator = webSocketProtocolAuthenticator(tokens, []);

  it('authenticates the token and removes its entry from the subprotocols', async () => {
    const req = request({ ...UPGRADE, 'sec-websocket-protocol': `a, ${bearer('tok')}, b` });
    expect(await authenticator.authenticate(req)).toEqual({ user: { name: 'alice', uid: '1', groups: ['dev'] } });
    expect(req.headers['sec-websocket-protocol']).toBe('a, b');
  });

  it('refuses a token no method accepts, and leaves the header alone', async () => {
    const protocols = `${bearer('other')}, b`;
    const req = request({ ...UPGRADE, 'sec-websocket-protocol': protocols });
    await expect(authenticator.authenticate(req)).rejects.toThrow('invalid bearer token');
    expect(req.headers['sec-websocket-protocol']).toBe(protocols);
  });

  it('has no opinion on a request that is not an upgrade', async () => {
    expect(await authenticator.authenticate(request({ 'sec-websocket-protocol': `${bearer('tok')}, b` }))).toBe(
      undefined,
    );
  });
});
