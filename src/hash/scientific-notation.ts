/**
 * What a spreadsheet makes of a long number it was allowed to read as one: 1.43567E+5,
 * 4,155552671E+09. Its last digits are gone, so such a value is rejected with a hint, by every
 * identifier type that is a long number (twitter_id, phone_number).
 */
export const SCIENTIFIC_NOTATION = /^[0-9]+(?:[.,][0-9]*)?e[+-]?[0-9]+$/i;
