/**
 * `--token-auth-file` (model: apiserver `plugin/pkg/authenticator/token/tokenfile`): a CSV file of static tokens,
 * one per line: `token,user,uid[,"group1,group2"]`. Blank lines and lines starting with `#` are skipped. A line
 * with fewer than three fields, an empty token or user, or a token given twice stops the server at startup with
 * the line number.
 */
import { type UserInfo } from '../authenticator';
import { type TokenAuthenticator } from './bearer';

/** Splits one CSV record (RFC 4180 quoting); throws on an unterminated quote. */
export function parseCsvRecord(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let value = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new Error('unterminated quoted field');
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            value += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += line[i++];
      }
      if (i < line.length && line[i] !== ',')
        throw new Error(`unexpected text after a quoted field at column ${i + 1}`);
    } else {
      const end = line.indexOf(',', i);
      value = end < 0 ? line.slice(i) : line.slice(i, end);
      if (value.includes('"')) throw new Error('bare " in a non-quoted field');
      i = end < 0 ? line.length : end;
    }
    fields.push(value);
    if (i >= line.length) return fields;
    i++; // the comma
  }
}

/** Parses a token file; `source` names it in errors. */
export function parseTokenFile(text: string, source: string): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const n = index + 1;
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    let fields: string[];
    try {
      fields = parseCsvRecord(line);
    } catch (err) {
      throw new Error(`${source}: line ${n}: ${(err as Error).message}`);
    }
    if (fields.length < 3)
      throw new Error(`${source}: line ${n}: expected at least 3 fields (token,user,uid), found ${fields.length}`);
    const [token, name, uid, groups] = fields.map((f) => f.trim()) as [string, string, string, string | undefined];
    if (token === '') throw new Error(`${source}: line ${n}: the token is empty`);
    if (name === '') throw new Error(`${source}: line ${n}: the user name is empty`);
    if (tokens.has(token)) throw new Error(`${source}: line ${n}: duplicate token`);
    const user: UserInfo = { name, groups: [] };
    if (uid !== '') user.uid = uid;
    if (groups !== undefined && groups !== '')
      user.groups = groups
        .split(',')
        .map((g) => g.trim())
        .filter((g) => g !== '');
    tokens.set(token, user);
  });
  return tokens;
}

/** The authenticator of a parsed token file. Unknown tokens: no opinion (another method may know them). */
export function tokenFileAuthenticator(tokens: Map<string, UserInfo>): TokenAuthenticator {
  return {
    async authenticateToken(token) {
      const user = tokens.get(token);
      return user && { user: { ...user, groups: [...user.groups] } };
    },
  };
}
