/**
 * Warnings for the client (model: apiserver `pkg/warning` and `pkg/endpoints/filters/warning.go`): code that serves
 * a request (admission webhooks today) calls {@link addWarning}, and each distinct text becomes a
 * `Warning: 299 - "<text>"` header of the response.
 *
 * Kubernetes finds the recorder in the request's `context.Context`. Here the code that produces warnings gets the
 * request's `RequestContext`, whose `signal` is the request's own deadline signal: `requestDeadline` (`timeout.ts`)
 * makes it, and the server passes it unchanged to the handlers of requests that are not long-running. The recorder is
 * looked up by that signal (a wrapped signal would lose the warnings; the webhook integration test checks they
 * arrive). Only mutating requests, the ones admission sees, are bound, and a recorder is built only when a first
 * warning comes, so other requests pay nothing.
 *
 * The limits are Kubernetes': identical texts are sent once; while the texts sent stay within 4096 characters
 * (code points) each is sent whole; the warning that would go past that switches to truncation, and every warning,
 * those already set included, is then cut to 256 characters; once 4096 characters have been sent that way, further
 * warnings are dropped. Texts are quoted as Go's `strconv.Quote` does (`net.NewWarningHeader`).
 */
import { type ServerResponse } from 'node:http';

import { type RequestContext } from '../registry/rest/rest';

/** Total characters of warning text sent whole, before truncation starts. */
export const TRUNCATE_AT_TOTAL_CHARS = 4 * 1024;
/** The length each warning is cut to once truncating. */
export const TRUNCATE_ITEM_CHARS = 256;

/** The `Warning` header value of `text` (warn-code 299), or undefined when the text is not valid Unicode. */
export function warningHeader(agent: string, text: string): string | undefined {
  let quoted = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) return undefined; // a lone surrogate: not valid UTF-8 once encoded
    if (ch === '"' || ch === '\\') quoted += `\\${ch}`;
    else if (cp >= 0x20 && cp < 0x7f) quoted += ch;
    else if (cp < 0x80) quoted += ASCII_ESCAPES[cp] ?? `\\x${hex(cp, 2)}`;
    else if (PRINTABLE.test(ch)) quoted += ch;
    else quoted += cp < 0x10000 ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
  }
  // Header values are written as latin1: the UTF-8 bytes of the text go out unchanged, as Go sends them.
  return Buffer.from(`299 ${agent || '-'} ${quoted}"`, 'utf8').toString('latin1');
}

const ASCII_ESCAPES: Record<number, string> = {
  0x07: '\\a',
  0x08: '\\b',
  0x09: '\\t',
  0x0a: '\\n',
  0x0b: '\\v',
  0x0c: '\\f',
  0x0d: '\\r',
};

/** Go's `unicode.IsPrint` above ASCII: letters, marks, numbers, punctuation and symbols. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** The first `n` code points of `s`. */
function truncate(s: string, n: number): { text: string; length: number } {
  const chars = [...s];
  return chars.length > n ? { text: chars.slice(0, n).join(''), length: n } : { text: s, length: chars.length };
}

/** Records the warnings of one request as headers of its response. */
export class ResponseWarningRecorder {
  private readonly recorded = new Set<string>();
  private readonly ordered: { agent: string; text: string }[] = [];
  /** Characters of warning text in the headers now. */
  private written = 0;
  private isTruncating = false;

  constructor(private readonly res: ServerResponse) {}

  /**
   * Adds a warning (`agent` '' for this server). Does nothing for an empty or repeated text, or once the
   * response's headers are sent (a warning produced after that point cannot reach the client).
   */
  add(agent: string, text: string): void {
    if (text === '' || this.res.headersSent) return;
    if (this.isTruncating && this.written >= TRUNCATE_AT_TOTAL_CHARS) return;
    if (this.recorded.has(text)) return;
    this.recorded.add(text);
    this.ordered.push({ agent, text });
    const item = this.isTruncating ? truncate(text, TRUNCATE_ITEM_CHARS) : truncate(text, Infinity);
    const header = warningHeader(agent, item.text);
    if (header === undefined) return;
    if (this.isTruncating || this.written + item.length <= TRUNCATE_AT_TOTAL_CHARS) {
      this.written += item.length;
      this.res.appendHeader('Warning', header);
      return;
    }
    // Over the limit: start again with every warning so far cut short.
    this.isTruncating = true;
    this.written = 0;
    this.res.removeHeader('Warning');
    for (const w of this.ordered) {
      const cut = truncate(w.text, TRUNCATE_ITEM_CHARS);
      const h = warningHeader(w.agent, cut.text);
      if (h === undefined) continue;
      this.written += cut.length;
      this.res.appendHeader('Warning', h);
    }
  }
}

/** The response of each bound request signal, replaced by its recorder at the first warning. */
const bound = new WeakMap<AbortSignal, ServerResponse | ResponseWarningRecorder>();

/**
 * Makes warnings added with `signal` as the RequestContext signal headers of `res` (called by
 * `requestDeadline` for mutating requests and reads of resources). `requestDeadline` unbinds it when the response
 * closes, see {@link unbindWarningRecorder}.
 */
export function bindWarningRecorder(signal: AbortSignal, res: ServerResponse): void {
  bound.set(signal, res);
}

/**
 * Drops the binding of `signal` once its response has closed (no header can be added after). Left to the weak map,
 * the response and with it the whole request would live as long as the signal, and Node's AbortSignals outlive
 * every young-generation collection (only a full one frees them): a GET's request, response and handler state were
 * promoted to the old space and then collected by mark-compacts, which made each scavenge copy ~2 MB and ran a
 * mark-compact every few seconds under load (issue 18: the get p99).
 */
export function unbindWarningRecorder(signal: AbortSignal): void {
  bound.delete(signal);
}

/**
 * Adds a warning to the response of the request `ctx` serves (model: `warning.AddWarning`). `agent` is '' for this
 * server. Dropped when the request has no recorder (internal writes, requests that are not mutating).
 */
export function addWarning(ctx: Pick<RequestContext, 'signal'>, agent: string, text: string): void {
  if (!ctx.signal) return;
  let r = bound.get(ctx.signal);
  if (r === undefined) return;
  if (!(r instanceof ResponseWarningRecorder)) {
    r = new ResponseWarningRecorder(r);
    bound.set(ctx.signal, r);
  }
  r.add(agent, text);
}
