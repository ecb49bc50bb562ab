/** The per-type guard decisions at their boundaries, and their messages. */
import { describe, expect, it } from 'vitest';
import { invalidValuesMessage, typeRemovalsMessage, typesLosingTooManyMembers, typesWithTooManyInvalidValues } from '../../src/jobs/identifier-type-guards.js';
import { moreThanShare } from '../../src/jobs/share.js';

describe('invalid values of a type', () => {
  it('exactly max_reject_ratio of the values passes, one more invalid value fails', () => {
    // 1 of 20 = 0.05: within; 1 of 19 (0.0526): over.
    expect(typesWithTooManyInvalidValues({ phone_number: 19 }, { phone_number: 1 }, 0.05)).toEqual([]);
    expect(typesWithTooManyInvalidValues({ phone_number: 18 }, { phone_number: 1 }, 0.05)).toEqual([{ type: 'phone_number', part: 1, whole: 19 }]);
    // 57 of 100 at 0.57: within, although 0.57 * 100 is 56.99999999999999.
    expect(typesWithTooManyInvalidValues({ email: 43 }, { email: 57 }, 0.57)).toEqual([]);
    expect(typesWithTooManyInvalidValues({ email: 42 }, { email: 58 }, 0.57)).toEqual([{ type: 'email', part: 58, whole: 100 }]);
  });

  it('judges each type by its own values: empty cells count nowhere, valid values of other types do not help', () => {
    // A sparse column: 90 handles in 200 rows, 4 invalid (4.4% of its values).
    expect(typesWithTooManyInvalidValues({ email: 200, handle: 86 }, { handle: 4 }, 0.05)).toEqual([]);
    // 10 invalid of 90 values is 11%, although it is 5% of the rows.
    expect(typesWithTooManyInvalidValues({ email: 200, handle: 80 }, { handle: 10 }, 0.05)).toEqual([{ type: 'handle', part: 10, whole: 90 }]);
    // Every value invalid, in identifier-type order.
    expect(typesWithTooManyInvalidValues({ email: 5 }, { phone_number: 200, email: 1 }, 0.5)).toEqual([{ type: 'phone_number', part: 200, whole: 200 }]);
    expect(typesWithTooManyInvalidValues({}, { handle: 1, email: 3 }, 0)).toEqual([
      { type: 'email', part: 3, whole: 3 },
      { type: 'handle', part: 1, whole: 1 },
    ]);
    // max_reject_ratio 1 never refuses; no invalid value never does.
    expect(typesWithTooManyInvalidValues({}, { phone_number: 200 }, 1)).toEqual([]);
    expect(typesWithTooManyInvalidValues({ phone_number: 200 }, {}, 0)).toEqual([]);
  });
});

describe('members a type would lose', () => {
  it('exactly max_remove_ratio of its members passes, one more removal fails; ratio 1 lets all go', () => {
    expect(typesLosingTooManyMembers({ email: 200, phone_number: 100 }, { phone_number: 50 }, 0.5)).toEqual([]);
    expect(typesLosingTooManyMembers({ email: 200, phone_number: 100 }, { phone_number: 51 }, 0.5)).toEqual([{ type: 'phone_number', part: 51, whole: 100 }]);
    expect(typesLosingTooManyMembers({ email: 200, phone_number: 100 }, { phone_number: 100 }, 1)).toEqual([]);
    // No minimum: one member of one, like the guard of the whole audience.
    expect(typesLosingTooManyMembers({ email: 200, handle: 1 }, { handle: 1 }, 0.5)).toEqual([{ type: 'handle', part: 1, whole: 1 }]);
    expect(typesLosingTooManyMembers({ email: 200 }, {}, 0)).toEqual([]);
  });
});

describe('moreThanShare', () => {
  it('is false for an empty whole', () => {
    expect(moreThanShare(0, 0, 0)).toBe(false);
    expect(moreThanShare(1, 2, 0.5)).toBe(false);
    expect(moreThanShare(2, 3, 0.5)).toBe(true);
  });
});

describe('messages', () => {
  const columns = { email: 'E-mail', phone_number: 'Phone', handle: 'Twitter' };
  it('name each type, its column and its counts, and what to do', () => {
    expect(invalidValuesMessage([{ type: 'phone_number', part: 1, whole: 3 }], columns, 0.2, '/jobs/crm.yaml')).toBe(
      '1 of 3 phone_number values (column Phone, 33.3%) is invalid, more than max_reject_ratio 0.2: the export is not trusted and nothing was removed. ' +
        'Fix that column of the export (the rejects file lists the invalid values) and run again; if such values are expected, raise max_reject_ratio in /jobs/crm.yaml',
    );
    expect(
      invalidValuesMessage(
        [
          { type: 'email', part: 3, whole: 4 },
          { type: 'phone_number', part: 1, whole: 1 },
          { type: 'handle', part: 2, whole: 2 },
        ],
        columns,
        0.05,
        '/jobs/crm.yaml',
      ),
    ).toBe(
      '3 of 4 email values (column E-mail, 75.0%), 1 of 1 phone_number value (column Phone, 100.0%) and 2 of 2 handle values (column Twitter, 100.0%) are invalid, more than max_reject_ratio 0.05: ' +
        'the export is not trusted and nothing was removed. Fix those columns of the export (the rejects file lists the invalid values) and run again; if such values are expected, raise max_reject_ratio in /jobs/crm.yaml',
    );
    expect(
      typeRemovalsMessage(
        [
          { type: 'phone_number', part: 200, whole: 200 },
          { type: 'handle', part: 3, whole: 4 },
        ],
        columns,
        0.5,
        '/jobs/crm.yaml',
      ),
    ).toBe(
      'the export would remove 200 of 200 phone_number members (column Phone, 100.0%) and 3 of 4 handle members (column Twitter, 75.0%), more than max_remove_ratio 0.5 of the members of each type; nothing was removed. ' +
        'If this is intended, raise audience.max_remove_ratio in /jobs/crm.yaml or run once with --max-delete-ratio 1',
    );
  });
});
