/**
 * `adsync backfill` of an audience job: a one-off full upload of a file that may be far
 * larger than memory. Rows stream straight into full requests (no diff against the state);
 * every acknowledged batch is committed to the state and moves the checkpoint, so a run
 * killed at any point resumes from the last acknowledged batch and ends the same.
 */
import { readCsvSource } from '../sources/read-source.js';
import { IdentifierList, addCountsByField, type CountsByField } from '../state/identifier-list.js';
import { AudienceRowMapper, EXPORT_HEADER_OPTIONS, mapCsvBatch } from '../transform/audience-records.js';
import { backfillStart } from './backfill-checkpoint.js';
import { BackfillWatermark } from './backfill-watermark.js';
import { audienceKey, type AudienceJob } from './job.js';
import type { RunContext } from './run-context.js';
import { forgottenWhileRemoved, sendIdentifiers } from './run-audience.js';

function lastRowOf(ids: IdentifierList): number {
  let last = 0;
  for (let i = 0; i < ids.length; i++) last = Math.max(last, ids.row(i));
  return last;
}

export async function backfillAudience(ctx: RunContext, job: AudienceJob): Promise<void> {
  const { summary, counters } = ctx;
  const { startRow, checkpoint, finish, reading, source } = await backfillStart(ctx, async () => {
    const opened = await readCsvSource(job.source, EXPORT_HEADER_OPTIONS);
    try {
      // Checks the header against the mapping before the backfill counts as started.
      return { reader: opened, mapper: new AudienceRowMapper(opened.header, job.audience, opened.name) };
    } catch (error) {
      await opened.close();
      throw error;
    }
  });
  const { reader, mapper } = source;
  const state = ctx.store.audience(audienceKey(job));
  counters.bytesTotal = reader.sizeBytes;
  counters.phase = 'uploading';
  const watermark = new BackfillWatermark(startRow);
  let lastRowRead = startRow;
  const invalid: CountsByField = {};

  async function* identifiers(): AsyncGenerator<IdentifierList> {
    // One list for every batch: the uploader copies what it takes before asking for the next.
    const page = new IdentifierList(1 << 12);
    for await (const batch of reader.batches) {
      page.clear();
      const mapped = mapCsvBatch(batch, mapper, page, ctx.options.rejectsWithValues, startRow);
      for (const entries of mapped.rejects) ctx.rejects.reject(entries);
      addCountsByField(invalid, mapped.invalid);
      if (Object.keys(invalid).length > 0) summary.invalid_identifiers = invalid;
      for (const r of batch.rows) lastRowRead = Math.max(lastRowRead, r.row);
      for (const r of batch.rejects) lastRowRead = Math.max(lastRowRead, r.row);
      summary.read += mapped.read;
      summary.valid += mapped.valid;
      counters.rowsRead = summary.read;
      counters.bytesRead = reader.bytesRead();
      yield page;
    }
  }

  const removing = job.audience.mode === 'remove';
  // Rows in file order: each row's identifiers travel as one user record.
  const result = await reading(sendIdentifiers(ctx, job, removing ? forgottenWhileRemoved(state, identifiers()) : identifiers(), removing ? 'Delete' : 'Update', 'row', 'rows', {
    onBuilt: (seq, batch) => watermark.dispatched(seq, lastRowOf(batch.ids)),
    onAck: async (ids, seq) => {
      await state.commit(removing ? { removed: ids, sentAt: Date.now(), mode: job.audience.mode } : { added: ids, sentAt: Date.now(), mode: job.audience.mode });
      if (removing) summary.removed += ids.length;
      else summary.added += ids.length;
      if (watermark.acknowledged(seq)) await checkpoint(watermark.rowsDone);
    },
  }));
  const complete = !result.stopped && result.failedUsers === 0;
  if (complete) watermark.finish(lastRowRead);
  await finish(complete, watermark.rowsDone, 'rows');
}
