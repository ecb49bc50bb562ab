/**
 * How identifiers are stored: a field code (the index in IDENTIFIER_TYPES) and the value as
 * bytes: the 32 bytes of a SHA-256 hex hash, or the UTF-8 of a partner_user_id. Half the
 * size of hex text, and comparisons on fixed-size blobs are cheap.
 */
import { IDENTIFIER_TYPES, type IdentifierType } from '../../hash/types.js';

const CODES = new Map<IdentifierType, number>(IDENTIFIER_TYPES.map((t, i) => [t, i]));
const PARTNER = CODES.get('partner_user_id');

export function fieldCode(field: IdentifierType): number {
  const code = CODES.get(field);
  if (code === undefined) throw new RangeError(`unknown identifier type ${String(field)}`);
  return code;
}

export function fieldOf(code: number): IdentifierType {
  const field = IDENTIFIER_TYPES[code];
  if (field === undefined) throw new RangeError(`unknown identifier code ${code}`);
  return field;
}

export function encodeValue(code: number, value: string): Buffer {
  return code === PARTNER ? Buffer.from(value, 'utf8') : Buffer.from(value, 'hex');
}

export function decodeValue(code: number, bytes: Buffer): string {
  return code === PARTNER ? bytes.toString('utf8') : bytes.toString('hex');
}
