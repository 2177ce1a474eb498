import { parseCsvRecord, parseTokenFile, tokenFileAuthenticator } from './token-file';

describe('token file', () => {
  it('reads tokens, users, uids and quoted groups', async () => {
    const tokens = parseTokenFile(
      '# admins\nt1,alice,1,"system:masters,dev"\n\nt2,bob,2\n t3 , carol ,, \n',
      'tokens.csv',
    );
    expect([...tokens.keys()]).toEqual(['t1', 't2', 't3']);
    const a = tokenFileAuthenticator(tokens);
    expect(await a.authenticateToken('t1', [])).toEqual({
      user: { name: 'alice', uid: '1', groups: ['system:masters', 'dev'] },
    });
    expect(await a.authenticateToken('t3', [])).toEqual({ user: { name: 'carol', groups: [] } });
    expect(await a.authenticateToken('t4', [])).toBeUndefined();
  });

  it.each([
    ['a,b\n', 'line 1: expected at least 3 fields (token,user,uid), found 2'],
    ['ok,u,1\n,u,2\n', 'line 2: the token is empty'],
    ['ok,,1\n', 'line 1: the user name is empty'],
    ['ok,u,1\nok,v,2\n', 'line 2: duplicate token'],
    ['ok,u,1,"a,b\n', 'line 1: unterminated quoted field'],
    ['ok,u,1,"a"b\n', 'line 1: unexpected text after a quoted field'],
  ])('rejects %j: %s', (text, message) => {
    expect(() => parseTokenFile(text, 'f.csv')).toThrow(`f.csv: ${message}`);
  });

  it('parses CSV quoting', () => {
    expect(parseCsvRecord('a,"b,c","d""e",')).toEqual(['a', 'b,c', 'd"e', '']);
  });
});
