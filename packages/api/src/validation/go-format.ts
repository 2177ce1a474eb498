/**
 * Printing values the way Go's fmt and strconv do, so that messages read exactly like those of
 * Kubernetes (`%q` for strings, `%v` for numbers). Internal to the value-level modules of the package.
 */

const PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/**
 * Quotes a string like Go's `strconv.Quote` (the `%q` verb): double quotes, backslash escapes for
 * `"` and `\`, C escapes for control characters, `\xNN`, `\uNNNN` or `\UNNNNNNNN` for other
 * non-printable code points; printable Unicode is kept as is. Never throws.
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp === 0x22) out += '\\"';
    else if (cp === 0x5c) out += '\\\\';
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp === 0x07) out += '\\a';
    else if (cp === 0x08) out += '\\b';
    else if (cp === 0x0c) out += '\\f';
    else if (cp === 0x0a) out += '\\n';
    else if (cp === 0x0d) out += '\\r';
    else if (cp === 0x09) out += '\\t';
    else if (cp === 0x0b) out += '\\v';
    else if (cp < 0x80) out += `\\x${hex(cp, 2)}`;
    else if (cp >= 0xd800 && cp <= 0xdfff)
      out += '\\ufffd'; // a lone surrogate: Go would see invalid UTF-8
    else if (cp !== 0xa0 && PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return out + '"';
}

/**
 * Formats a number as Go's `%v` does for integers and floats: integers plainly, other values in
 * the shortest form that round-trips (exponent form for very large or small magnitudes).
 */
export function goNumber(n: number | bigint): string {
  if (typeof n === 'bigint') return n.toString();
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return n.toFixed(0);
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    // Go writes the exponent with at least two digits and a sign: 1e-05, 1e+21.
    const [mant = '', exp = '0'] = n.toExponential().split('e');
    const sign = exp.startsWith('-') ? '-' : '+';
    const digits = exp.replace(/^[+-]/, '').padStart(2, '0');
    return `${mant}e${sign}${digits}`;
  }
  return String(n);
}

/** UTF-8 length in bytes, which is what Go's `len(string)` measures. */
export function byteLength(s: string): number {
  // Fast path: pure ASCII strings have one byte per UTF-16 unit.
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) return Buffer.byteLength(s, 'utf8');
  }
  return s.length;
}
