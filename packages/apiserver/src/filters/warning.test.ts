import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

import {
  addWarning,
  bindWarningRecorder,
  ResponseWarningRecorder,
  TRUNCATE_AT_TOTAL_CHARS,
  TRUNCATE_ITEM_CHARS,
  unbindWarningRecorder,
  warningHeader,
} from './warning';

function response(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}

/** The Warning headers of `res`, decoded back from the latin1 form Node writes. */
function warnings(res: ServerResponse): string[] {
  const h = res.getHeader('warning');
  const values = h === undefined ? [] : Array.isArray(h) ? h : [String(h)];
  return values.map((v) => Buffer.from(v, 'latin1').toString('utf8'));
}

describe('warningHeader', () => {
  it.each([
    ['plain text', '', 'a warning', '299 - "a warning"'],
    ['an agent', 'apiserver', 'x', '299 apiserver "x"'],
    ['quotes and backslashes', '', 'say "hi" \\o/', '299 - "say \\"hi\\" \\\\o/"'],
    ['ASCII controls', '', 'a\nb\tc\r\x00\x1b\x7f', '299 - "a\\nb\\tc\\r\\x00\\x1b\\x7f"'],
    ['printable Unicode', '', 'naïve ☃ 😀', '299 - "naïve ☃ 😀"'],
    ['Unicode that is not printable', '', 'a\u0085b\u200bc\u00a0d', '299 - "a\\u0085b\\u200bc\\u00a0d"'],
    ['an unassigned plane', '', '\u{e0001}', '299 - "\\U000e0001"'],
  ])('quotes %s as Go does', (_what, agent, text, header) => {
    expect(Buffer.from(warningHeader(agent, text)!, 'latin1').toString('utf8')).toBe(header);
  });

  it('drops text that is not valid Unicode', () => {
    expect(warningHeader('', 'lone \ud800 surrogate')).toBeUndefined();
  });

  it('is a valid header value', () => {
    expect(() => response().setHeader('Warning', warningHeader('', 'naïve\n😀')!)).not.toThrow();
  });
});

describe('ResponseWarningRecorder', () => {
  it('adds each distinct, non-empty text once, in order', () => {
    const res = response();
    const r = new ResponseWarningRecorder(res);
    for (const t of ['one', '', 'two', 'one', 'three', 'two']) r.add('', t);
    expect(warnings(res)).toEqual(['299 - "one"', '299 - "two"', '299 - "three"']);
  });

  it('adds nothing once the headers are sent', () => {
    const res = response();
    const r = new ResponseWarningRecorder(res);
    r.add('', 'before');
    res.writeHead(200);
    r.add('', 'after');
    expect(warnings(res)).toEqual(['299 - "before"']);
  });

  it('sends texts whole up to 4096 characters, then cuts every one to 256, then stops', () => {
    const res = response();
    const r = new ResponseWarningRecorder(res);
    const long = (c: string, n: number): string => c.repeat(n);
    // Multi-byte characters: the limits count characters, not bytes.
    r.add('', long('é', 2000));
    r.add('', long('b', 2000));
    expect(warnings(res).map((w) => w.length)).toEqual([2008, 2008]);
    r.add('', long('c', 200));
    expect(warnings(res)).toEqual([
      `299 - "${long('é', TRUNCATE_ITEM_CHARS)}"`,
      `299 - "${long('b', TRUNCATE_ITEM_CHARS)}"`,
      `299 - "${long('c', 200)}"`,
    ]);
    // 712 characters so far; 14 more cut warnings reach 4096, after which nothing is added.
    for (let i = 0; i < 20; i++) r.add('', `${i}`.padEnd(1000, '.'));
    const sent = warnings(res);
    const chars = sent.reduce((n, w) => n + [...w].length - '299 - ""'.length, 0);
    expect(chars).toBeGreaterThanOrEqual(TRUNCATE_AT_TOTAL_CHARS);
    expect(chars).toBeLessThan(TRUNCATE_AT_TOTAL_CHARS + TRUNCATE_ITEM_CHARS);
    expect(sent).toHaveLength(3 + 14);
  });
});

describe('addWarning', () => {
  it('reaches the response of the request whose signal the context carries', () => {
    const [a, b] = [response(), response()];
    const [sa, sb] = [new AbortController().signal, new AbortController().signal];
    bindWarningRecorder(sa, a);
    bindWarningRecorder(sb, b);
    addWarning({ signal: sa }, '', 'for a');
    addWarning({ signal: sb }, '', 'for b');
    addWarning({ signal: sa }, '', 'for a');
    addWarning({ signal: sa }, '', 'again for a');
    expect([warnings(a), warnings(b)]).toEqual([['299 - "for a"', '299 - "again for a"'], ['299 - "for b"']]);
  });

  it('lets go of a response once its signal is unbound (requestDeadline, at the response close)', () => {
    const [a, b] = [response(), response()];
    const [sa, sb] = [new AbortController().signal, new AbortController().signal];
    bindWarningRecorder(sa, a);
    bindWarningRecorder(sb, b);
    unbindWarningRecorder(sa);
    addWarning({ signal: sa }, '', 'after a closed');
    addWarning({ signal: sb }, '', 'for b');
    expect([warnings(a), warnings(b)]).toEqual([[], ['299 - "for b"']]);
  });

  it('drops warnings of requests without a recorder', () => {
    expect(() => addWarning({}, '', 'no signal')).not.toThrow();
    expect(() => addWarning({ signal: new AbortController().signal }, '', 'unbound')).not.toThrow();
  });
});
