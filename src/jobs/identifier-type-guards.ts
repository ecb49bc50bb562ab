/**
 * The guards of a mirror run per identifier type: a whole-audience guard cannot see one column
 * going bad while the others are sound. An export whose phone numbers Excel turned into
 * `2.01555E+09` still has every row valid (by its email), so no row is rejected, and its phone
 * members are half of the audience at most: only per type do the counts say what happened.
 *
 * - A type whose non-empty values are invalid more often than max_reject_ratio: the export is
 *   not trusted, nothing is removed and the run fails. Empty cells are not values: a column
 *   filled on a few rows only (a handle for some customers) is judged by the values it has.
 * - A type that would lose more than max_remove_ratio of its own members (a column that
 *   arrived empty): nothing is removed and the run fails, as for the whole audience.
 *
 * Neither has a minimum count, like the whole-audience guards: a type with few members or
 * values is judged the same way. The false alarm (a type of three members losing two) fails
 * loudly, with the override in its message; the opposite mistake would remove members silently.
 */
import { IDENTIFIER_TYPES, type IdentifierType } from '../hash/types.js';
import type { CountsByField } from '../state/identifier-list.js';
import { moreThanShare, percentOf } from './share.js';

/** A type over its limit: `part` of its `whole` (invalid of its values, or removals of its members). */
export interface TypeOverLimit {
  type: IdentifierType;
  part: number;
  whole: number;
}

function overLimit(parts: CountsByField, wholes: (type: IdentifierType, part: number) => number, ratio: number): TypeOverLimit[] {
  return IDENTIFIER_TYPES.flatMap((type) => {
    const part = parts[type] ?? 0;
    const whole = wholes(type, part);
    return part > 0 && moreThanShare(part, whole, ratio) ? [{ type, part, whole }] : [];
  });
}

/** Types more of whose non-empty values (valid and invalid) were invalid than `maxRejectRatio`. */
export function typesWithTooManyInvalidValues(valid: CountsByField, invalid: CountsByField, maxRejectRatio: number): TypeOverLimit[] {
  return overLimit(invalid, (type, bad) => (valid[type] ?? 0) + bad, maxRejectRatio);
}

/** Types that would lose more than `maxRemoveRatio` of their members. */
export function typesLosingTooManyMembers(members: CountsByField, removes: CountsByField, maxRemoveRatio: number): TypeOverLimit[] {
  return overLimit(removes, (type) => members[type] ?? 0, maxRemoveRatio);
}

/** Where a type's values come from: its column, or none (members of a type the job no longer maps are all removed by a mirror). */
function columnOf(type: IdentifierType, columns: Partial<Record<IdentifierType, string>>): string {
  const column = columns[type];
  return column === undefined ? 'not in audience.identifiers any more' : `column ${column}`;
}

/** `200 of 200 phone_number values (column Phone, 100.0%) and ...` */
function describe(types: readonly TypeOverLimit[], noun: 'value' | 'member', columns: Partial<Record<IdentifierType, string>>): string {
  const parts = types.map((t) => `${t.part} of ${t.whole} ${t.type} ${noun}${t.whole === 1 ? '' : 's'} (${columnOf(t.type, columns)}, ${percentOf(t.part, t.whole)})`);
  return parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1) ?? ''}`;
}

/** Why a run with types of too many invalid values removed nothing, and what to do. */
export function invalidValuesMessage(types: readonly TypeOverLimit[], columns: Partial<Record<IdentifierType, string>>, maxRejectRatio: number, jobFile: string): string {
  const one = types.length === 1;
  const verb = one && types[0]?.part === 1 ? 'is' : 'are';
  return (
    `${describe(types, 'value', columns)} ${verb} invalid, more than max_reject_ratio ${maxRejectRatio}: the export is not trusted and nothing was removed. ` +
    `Fix ${one ? 'that column' : 'those columns'} of the export (the rejects file lists the invalid values) and run again; if such values are expected, raise max_reject_ratio in ${jobFile}`
  );
}

/** Why a run with types that would lose too many members removed nothing, and the override. */
export function typeRemovalsMessage(types: readonly TypeOverLimit[], columns: Partial<Record<IdentifierType, string>>, maxRemoveRatio: number, jobFile: string): string {
  return (
    `the export would remove ${describe(types, 'member', columns)}, more than max_remove_ratio ${maxRemoveRatio} of the members of ${types.length === 1 ? 'that type' : 'each type'}; nothing was removed. ` +
    `If this is intended, raise audience.max_remove_ratio in ${jobFile} or run once with --max-delete-ratio 1`
  );
}
