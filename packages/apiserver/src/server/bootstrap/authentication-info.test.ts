import { X509Certificate } from 'node:crypto';

import { testCA } from '../../auth/authentication/testing/pki';
import { authenticationInfoData } from './authentication-info';

describe('authenticationInfoData', () => {
  it('is empty without client certificates or a front proxy', () => {
    expect(authenticationInfoData(undefined)).toEqual({});
    expect(authenticationInfoData({} as never)).toEqual({});
  });

  it('publishes the client CA and the front proxy configuration', async () => {
    const client = new X509Certificate((await testCA('client-ca')).certPem);
    const proxy = new X509Certificate((await testCA('proxy-ca')).certPem);
    const data = authenticationInfoData({
      clientCA: [client],
      requestHeader: {
        roots: [proxy],
        allowedNames: ['front-proxy'],
        usernameHeaders: ['X-Remote-User'],
        groupHeaders: ['X-Remote-Group'],
        extraHeaderPrefixes: ['X-Remote-Extra-'],
      },
    } as never);
    expect(Object.keys(data).sort()).toEqual([
      'client-ca-file',
      'requestheader-allowed-names',
      'requestheader-client-ca-file',
      'requestheader-extra-headers-prefix',
      'requestheader-group-headers',
      'requestheader-username-headers',
    ]);
    expect(new X509Certificate(data['client-ca-file']!).fingerprint256).toBe(client.fingerprint256);
    expect(new X509Certificate(data['requestheader-client-ca-file']!).fingerprint256).toBe(proxy.fingerprint256);
    expect(JSON.parse(data['requestheader-allowed-names']!)).toEqual(['front-proxy']);
    expect(JSON.parse(data['requestheader-username-headers']!)).toEqual(['X-Remote-User']);
  });
});
