/**
 * Why a run that a stop signal (SIGTERM, Ctrl-C) ended is `interrupted`: the `error` of its
 * summary, in `adsync runs` and the scheduler's log. It names the phase the signal came in and
 * what that leaves for the next run, since at 3 a.m. "was anything sent?" is the question: a
 * stop while reading, listing or planning sends nothing (every uploader checks the signal
 * before each request), one in the upload commits what was in flight.
 *
 * The phase is the one of the moment the signal came, not of the end: a run goes on to a
 * point where it can stop, and the listing ends back in `planning` (run-catalog.ts).
 * A stop while waiting for the target's lock is worded in runner.ts, which knows who held it.
 */
import type { RunKind } from '../state/store.js';
import type { RunCounters } from './progress.js';
import type { RunOptions } from './run-context.js';

/** What a failed or interrupted backfill leaves: the same command resumes it. */
export const BACKFILL_RESUMES = 'run the same backfill command again: it resumes after the last acknowledged row';

export interface StoppedRun {
  kind: RunKind;
  command: RunOptions['command'];
  /** The run's phase when the signal came. */
  phase: RunCounters['phase'];
  /** Rows or items read, at the end. */
  read: number;
  counters: Pick<RunCounters, 'listed' | 'sent' | 'toSend'>;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

export function stoppedBySignal(run: StoppedRun): string {
  const { counters } = run;
  const records = run.kind === 'catalog' ? 'products' : 'identifiers';
  switch (run.phase) {
    case 'waiting':
    case 'reading':
      return `stopped by a signal while reading the source (${count(run.read)} ${run.kind === 'catalog' ? 'items' : 'rows'} read); nothing was sent`;
    case 'listing':
      return `stopped by a signal while listing the products the service holds (${count(counters.listed)} listed); nothing was sent, and the next run lists them again`;
    case 'planning':
      return 'stopped by a signal while planning; nothing was sent';
    case 'uploading':
    case 'finishing':
      if (run.command === 'backfill') return `stopped by a signal after committing the work in flight; ${BACKFILL_RESUMES}`;
      // What comes after a catalog's last product: its product sets (an audience run whose
      // upload is done has nothing left that a stop could cut off).
      if (run.kind === 'catalog' && counters.sent >= counters.toSend) {
        return `stopped by a signal after the upload (${count(counters.sent)} ${records} acknowledged), before the product sets were brought up to date; the next run does it`;
      }
      return `stopped by a signal after committing the work in flight: ${count(counters.sent)} of the ${count(counters.toSend)} ${records} to send acknowledged; the next run sends the rest`;
  }
}
