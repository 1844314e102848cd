/**
 * JSON Schema `format`s weft enforces, each written as an anchored regex for
 * the pattern automaton (regex.ts). Each language is the format's (RFC 3339,
 * RFC 1123, RFC 4291, RFC 4122 as ajv-formats checks them) or a subset of it,
 * never larger, so every output passes a format-asserting validator:
 *
 * - date, date-time: real calendar dates (days per month, 29 February in leap
 *   years only); time with hours 00-23, no leap second `60`; date-time and
 *   time need an offset (`Z` or `+hh:mm`), as RFC 3339's full-time does;
 * - duration: ISO 8601 as RFC 3339's appendix A (`P1Y2M`, `PT5S`, `P3W`);
 * - email: ajv-formats' (dot-atom local part, a host of at least two labels);
 * - hostname: labels of 1-63 letters, digits and inner hyphens, 253 characters
 *   at most in all (the string's maxLength is lowered to 253);
 * - ipv4: dotted quad without leading zeros; ipv6: RFC 4291 text forms, `::`
 *   compression and an embedded IPv4 tail included, no zone id;
 * - uuid: 8-4-4-4-12 hex digits;
 * - uri, uri-reference: RFC 3986's grammar (scheme, authority, path, query, fragment, percent
 *   escapes), without IP-literal hosts (`http://[::1]/`).
 */
const YEAR = '\\d{4}';
const LEAP_YEAR = '(?:\\d\\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)';
const DATE = `(?:${YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))|${LEAP_YEAR}-02-29)`;
const TIME = '(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:[Zz]|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)';
const DURATION_DATE = '(?:\\d+Y(?:\\d+M)?(?:\\d+D)?|\\d+M(?:\\d+D)?|\\d+D)';
const DURATION_TIME = 'T(?:\\d+H(?:\\d+M)?(?:\\d+S)?|\\d+M(?:\\d+S)?|\\d+S)';
const ATOM = "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;
const H16 = '[0-9a-fA-F]{1,4}';

// RFC 3986 (IP-literal hosts `[...]` left out: a subset).
const PCT = '%[0-9a-fA-F]{2}';
const UNRESERVED_SUB = "[A-Za-z0-9\\-._~!$&'()*+,;=]";
const PCHAR = `(?:[A-Za-z0-9\\-._~!$&'()*+,;=:@]|${PCT})`;
const AUTHORITY = `(?:(?:${UNRESERVED_SUB}|:|${PCT})*@)?(?:${UNRESERVED_SUB}|${PCT})*(?::\\d*)?`;
const PATH_ABEMPTY = `(?:/${PCHAR}*)*`;
const PATH_ABSOLUTE = `/(?:${PCHAR}+(?:/${PCHAR}*)*)?`;
const PATH_ROOTLESS = `${PCHAR}+(?:/${PCHAR}*)*`;
const PATH_NOSCHEME = `(?:[A-Za-z0-9\\-._~!$&'()*+,;=@]|${PCT})+(?:/${PCHAR}*)*`;
const QUERY_FRAGMENT = `(?:\\?(?:${PCHAR}|[/?])*)?(?:#(?:${PCHAR}|[/?])*)?`;
const URI = `[A-Za-z][A-Za-z0-9+\\-.]*:(?://${AUTHORITY}${PATH_ABEMPTY}|${PATH_ABSOLUTE}|${PATH_ROOTLESS})?${QUERY_FRAGMENT}`;
const RELATIVE_REF = `(?://${AUTHORITY}${PATH_ABEMPTY}|${PATH_ABSOLUTE}|${PATH_NOSCHEME})?${QUERY_FRAGMENT}`;

/** IPv6 text forms: eight groups, or groups around one `::`; the last two groups may be an IPv4 address. */
function ipv6(): string {
  const groups = (n: number, sep: 'before' | 'after'): string => (n === 0 ? '' : sep === 'before' ? `(?:${H16}:){${n}}` : `(?::${H16}){${n}}`);
  const forms: string[] = [];
  for (const tail of [1, 2]) {
    const last = tail === 1 ? H16 : IPV4;
    // Without compression: 8 - tail groups, then the tail.
    forms.push(`(?:${H16}:){${8 - tail}}${last}`);
    // With `::`: a groups before, b after (the tail among them when b > 0), a + b + tail <= 7 + ... at most 7 groups in all.
    for (let a = 0; a <= 7; a++) {
      for (let b = 0; a + b + tail <= 7; b++) {
        const before = a === 0 ? '' : `${H16}${groups(a - 1, 'after')}`;
        forms.push(`${before}::${groups(b, 'before')}${last}`);
      }
    }
  }
  // `::` at the very end (no tail): a groups before it.
  for (let a = 0; a <= 7; a++) forms.push(`${a === 0 ? '' : `${H16}${groups(a - 1, 'after')}`}::`);
  return `(?:${forms.join('|')})`;
}

export const FORMATS: Readonly<Record<string, { readonly pattern: string; readonly maxLength?: number }>> = {
  date: { pattern: `^${DATE}$` },
  time: { pattern: `^${TIME}$` },
  'date-time': { pattern: `^${DATE}[Tt]${TIME}$` },
  duration: { pattern: `^P(?:${DURATION_DATE}(?:${DURATION_TIME})?|${DURATION_TIME}|\\d+W)$` },
  email: { pattern: `^${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+${LABEL}$` },
  hostname: { pattern: `^${LABEL}(?:\\.${LABEL})*$`, maxLength: 253 },
  ipv4: { pattern: `^${IPV4}$` },
  ipv6: { pattern: `^${ipv6()}$` },
  uri: { pattern: `^${URI}$` },
  'uri-reference': { pattern: `^(?:${URI}|${RELATIVE_REF})$` },
  uuid: { pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' },
};
