/**
 * Decoding of HTML character references: numeric (&#39; &#x27;) and the named ones of HTML 4
 * plus &apos; (the names product feeds use in practice). A name outside that set is left as
 * written rather than guessed.
 */

// name:code point, the HTML 4 entity set (lang/rang with their HTML5 code points) plus apos.
const NAMED_TABLE =
  'quot:34 amp:38 apos:39 lt:60 gt:62 ' +
  'nbsp:160 iexcl:161 cent:162 pound:163 curren:164 yen:165 brvbar:166 sect:167 uml:168 copy:169 ordf:170 laquo:171 ' +
  'not:172 shy:173 reg:174 macr:175 deg:176 plusmn:177 sup2:178 sup3:179 acute:180 micro:181 para:182 middot:183 ' +
  'cedil:184 sup1:185 ordm:186 raquo:187 frac14:188 frac12:189 frac34:190 iquest:191 Agrave:192 Aacute:193 Acirc:194 ' +
  'Atilde:195 Auml:196 Aring:197 AElig:198 Ccedil:199 Egrave:200 Eacute:201 Ecirc:202 Euml:203 Igrave:204 Iacute:205 ' +
  'Icirc:206 Iuml:207 ETH:208 Ntilde:209 Ograve:210 Oacute:211 Ocirc:212 Otilde:213 Ouml:214 times:215 Oslash:216 ' +
  'Ugrave:217 Uacute:218 Ucirc:219 Uuml:220 Yacute:221 THORN:222 szlig:223 agrave:224 aacute:225 acirc:226 atilde:227 ' +
  'auml:228 aring:229 aelig:230 ccedil:231 egrave:232 eacute:233 ecirc:234 euml:235 igrave:236 iacute:237 icirc:238 ' +
  'iuml:239 eth:240 ntilde:241 ograve:242 oacute:243 ocirc:244 otilde:245 ouml:246 divide:247 oslash:248 ugrave:249 ' +
  'uacute:250 ucirc:251 uuml:252 yacute:253 thorn:254 yuml:255 ' +
  'OElig:338 oelig:339 Scaron:352 scaron:353 Yuml:376 fnof:402 circ:710 tilde:732 ' +
  'Alpha:913 Beta:914 Gamma:915 Delta:916 Epsilon:917 Zeta:918 Eta:919 Theta:920 Iota:921 Kappa:922 Lambda:923 Mu:924 ' +
  'Nu:925 Xi:926 Omicron:927 Pi:928 Rho:929 Sigma:931 Tau:932 Upsilon:933 Phi:934 Chi:935 Psi:936 Omega:937 ' +
  'alpha:945 beta:946 gamma:947 delta:948 epsilon:949 zeta:950 eta:951 theta:952 iota:953 kappa:954 lambda:955 mu:956 ' +
  'nu:957 xi:958 omicron:959 pi:960 rho:961 sigmaf:962 sigma:963 tau:964 upsilon:965 phi:966 chi:967 psi:968 omega:969 ' +
  'thetasym:977 upsih:978 piv:982 ' +
  'ensp:8194 emsp:8195 thinsp:8201 zwnj:8204 zwj:8205 lrm:8206 rlm:8207 ndash:8211 mdash:8212 lsquo:8216 rsquo:8217 ' +
  'sbquo:8218 ldquo:8220 rdquo:8221 bdquo:8222 dagger:8224 Dagger:8225 bull:8226 hellip:8230 permil:8240 prime:8242 ' +
  'Prime:8243 lsaquo:8249 rsaquo:8250 oline:8254 frasl:8260 euro:8364 image:8465 weierp:8472 real:8476 trade:8482 ' +
  'alefsym:8501 larr:8592 uarr:8593 rarr:8594 darr:8595 harr:8596 crarr:8629 lArr:8656 uArr:8657 rArr:8658 dArr:8659 ' +
  'hArr:8660 forall:8704 part:8706 exist:8707 empty:8709 nabla:8711 isin:8712 notin:8713 ni:8715 prod:8719 sum:8721 ' +
  'minus:8722 lowast:8727 radic:8730 prop:8733 infin:8734 ang:8736 and:8743 or:8744 cap:8745 cup:8746 int:8747 ' +
  'there4:8756 sim:8764 cong:8773 asymp:8776 ne:8800 equiv:8801 le:8804 ge:8805 sub:8834 sup:8835 nsub:8836 sube:8838 ' +
  'supe:8839 oplus:8853 otimes:8855 perp:8869 sdot:8901 lceil:8968 rceil:8969 lfloor:8970 rfloor:8971 lang:10216 ' +
  'rang:10217 loz:9674 spades:9824 clubs:9827 hearts:9829 diams:9830';

const NAMED: ReadonlyMap<string, string> = new Map(
  NAMED_TABLE.split(' ').map((pair) => {
    const [name = '', code = '0'] = pair.split(':');
    return [name, String.fromCodePoint(Number(code))];
  }),
);

// HTML reads &#128; to &#159; as Windows-1252 (text pasted from word processors uses &#146;
// for an apostrophe). Code points left out of this table are C1 controls and stay as such.
const WINDOWS_1252: ReadonlyMap<number, number> = new Map([
  [0x80, 0x20ac], [0x82, 0x201a], [0x83, 0x0192], [0x84, 0x201e], [0x85, 0x2026], [0x86, 0x2020], [0x87, 0x2021],
  [0x88, 0x02c6], [0x89, 0x2030], [0x8a, 0x0160], [0x8b, 0x2039], [0x8c, 0x0152], [0x8e, 0x017d], [0x91, 0x2018],
  [0x92, 0x2019], [0x93, 0x201c], [0x94, 0x201d], [0x95, 0x2022], [0x96, 0x2013], [0x97, 0x2014], [0x98, 0x02dc],
  [0x99, 0x2122], [0x9a, 0x0161], [0x9b, 0x203a], [0x9c, 0x0153], [0x9e, 0x017e], [0x9f, 0x0178],
]);

function fromNumber(code: number): string {
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
  return String.fromCodePoint(WINDOWS_1252.get(code) ?? code);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}
/** An ASCII letter (a character code). */
export function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** A decoded character reference: its text and the index just past its ";". */
export interface DecodedReference {
  value: string;
  end: number;
}

/**
 * The character reference starting at text[at] (an "&"), or undefined when there is none
 * there: &#39; (1 to 8 digits), &#x27; (1 to 7 hex digits), &name; (a name of the table).
 */
export function decodeReferenceAt(text: string, at: number): DecodedReference | undefined {
  let i = at + 1;
  if (text.charCodeAt(i) === 35 /* # */) {
    i++;
    const hex = (text.charCodeAt(i) | 0x20) === 120; /* x or X */
    if (hex) i++;
    const start = i;
    const max = hex ? 7 : 8;
    while (i - start < max && (hex ? isHexDigit(text.charCodeAt(i)) : isDigit(text.charCodeAt(i)))) i++;
    if (i === start || text.charCodeAt(i) !== 59 /* ; */) return undefined;
    return { value: fromNumber(parseInt(text.slice(start, i), hex ? 16 : 10)), end: i + 1 };
  }
  const start = i;
  if (!isLetter(text.charCodeAt(i))) return undefined;
  while (i - start < 32 && (isLetter(text.charCodeAt(i)) || isDigit(text.charCodeAt(i)))) i++;
  if (text.charCodeAt(i) !== 59) return undefined;
  const value = NAMED.get(text.slice(start, i));
  return value === undefined ? undefined : { value, end: i + 1 };
}

/** Decodes character references once ("&amp;lt;" gives "&lt;"); unknown names stay as written. */
export function decodeEntities(text: string): string {
  let amp = text.indexOf('&');
  if (amp === -1) return text;
  let out = '';
  let copied = 0;
  while (amp !== -1) {
    const reference = decodeReferenceAt(text, amp);
    if (reference === undefined) {
      amp = text.indexOf('&', amp + 1);
      continue;
    }
    out += text.slice(copied, amp) + reference.value;
    copied = reference.end;
    amp = text.indexOf('&', copied);
  }
  return out + text.slice(copied);
}
