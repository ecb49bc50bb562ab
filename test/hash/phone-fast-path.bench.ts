/**
 * Throughput of phone_number normalization with and without the fast path, on a realistic
 * CRM phone column and on the differential test's mix (values/s = hz x 1000).
 * Not part of the test run: `npx vitest bench --run test/hash/phone-fast-path.bench.ts`.
 */
import { bench, describe } from 'vitest';
import { hashIdentifier } from '../../src/hash/index.js';
import { phoneText, phoneTextWithoutFastPath } from '../../src/hash/phone.js';
import { differentialCell, Random, realisticCell, type Cell } from './phone-number-generator.js';

const BATCH = 1000;
/** Long runs: the machine is shared, short ones are noise. */
const OPTIONS = { time: 3000, warmupTime: 500 };

function cells(make: (random: Random) => Cell, seed: number, n: number): Cell[] {
  const random = new Random(seed);
  return Array.from({ length: n }, () => make(random));
}

for (const [name, column] of [
  ['realistic CRM column', cells(realisticCell, 7, 20_000)],
  ['differential test mix', cells(differentialCell, 8, 20_000)],
] as const) {
  describe(`${name} (x${BATCH} values per iteration)`, () => {
    let at = 0;
    const next = (): Cell => {
      at = (at + 1) % column.length;
      return column[at] ?? { raw: '', ctx: undefined };
    };
    bench('libphonenumber-js only (phoneTextWithoutFastPath)', () => {
      for (let i = 0; i < BATCH; i++) {
        const cell = next();
        phoneTextWithoutFastPath(cell.raw, cell.ctx);
      }
    }, OPTIONS);
    bench('fast path + fallback (phoneText)', () => {
      for (let i = 0; i < BATCH; i++) {
        const cell = next();
        phoneText(cell.raw, cell.ctx);
      }
    }, OPTIONS);
    bench("hashIdentifier('phone_number') (fast path + SHA-256)", () => {
      for (let i = 0; i < BATCH; i++) {
        const cell = next();
        hashIdentifier('phone_number', cell.raw, cell.ctx);
      }
    }, OPTIONS);
  });
}
