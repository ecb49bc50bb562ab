/**
 * The state store: what adsync remembers between runs. Kept behind this small async
 * interface so that a PostgreSQL implementation can serve workers on several machines;
 * SQLite (src/state/sqlite) is the embedded default.
 *
 * Nothing secret is ever stored here: no credentials, no tokens, no raw identifiers (only
 * SHA-256 hashes, and partner_user_id values, which are sent unhashed by design).
 */
import type { CountsByField, IdentifierList } from './identifier-list.js';

export type RunKind = 'custom_audience' | 'do_not_reach' | 'catalog';
export type RunStatus = 'running' | 'success' | 'failed' | 'interrupted';

export interface RunRecord {
  runId: string;
  job: string;
  kind: RunKind;
  /** run | backfill */
  command: string;
  status: RunStatus;
  dryRun: boolean;
  startedAt: number;
  finishedAt: number | undefined;
  /** The JSON summary of the run, once finished. */
  summary: Record<string, unknown> | undefined;
  error: string | undefined;
  rejectsFile: string | undefined;
}

export interface RunHistory {
  start(input: { runId: string; job: string; kind: RunKind; command: string; dryRun: boolean; startedAt: number }): Promise<void>;
  finish(runId: string, input: { status: RunStatus; finishedAt: number; summary: Record<string, unknown>; error?: string | undefined; rejectsFile?: string | undefined }): Promise<void>;
  list(filter?: { job?: string | undefined; limit?: number | undefined }): Promise<RunRecord[]>;
  /** The same runs as list(), one at a time: a long history is never held whole (`adsync runs --json`). */
  each(filter?: { job?: string | undefined; limit?: number | undefined }): AsyncIterable<RunRecord>;
  get(runId: string): Promise<RunRecord | undefined>;
  /** Marks runs left 'running' by a process that died as failed; their run ids. */
  markAbandoned(job: string, now: number): Promise<string[]>;
  /**
   * Who reports a run that markAbandoned marked, exactly once (a run whose lock was taken over
   * after it expired may still be alive, and end itself). `reportedBy` (the run that marked it,
   * at its end): true when the run is still as marked, and records that `reportedBy` reports it.
   */
  reportAbandoned(runId: string, reportedBy: string): Promise<boolean>;
  /**
   * A run that lost its lock, at its end: true when it reports itself (it was not marked
   * abandoned, or the mark is undone now: its taker will not report it); false when the run
   * that marked it has reported it already.
   */
  reportsItself(runId: string): Promise<boolean>;
}

export interface LockInfo {
  job: string;
  owner: string;
  acquiredAt: number;
  heartbeatAt: number;
  expiresAt: number;
}

export interface JobLocks {
  /** Takes the job's lock unless a live holder has it; an expired lock is taken over. */
  acquire(job: string, owner: string, ttlMs: number, now: number): Promise<{ acquired: true } | { acquired: false; holder: LockInfo }>;
  /** Extends the lock; false when the lock was lost (expired and taken by another owner). */
  heartbeat(job: string, owner: string, ttlMs: number, now: number): Promise<boolean>;
  release(job: string, owner: string): Promise<void>;
  get(job: string): Promise<LockInfo | undefined>;
  /** Removes a lock whatever its owner (`adsync unlock`). */
  forceRelease(job: string): Promise<boolean>;
  /** Every lock, by key; only those whose owner begins with `ownerPrefix` when given (`adsync unlock`: a dead run's target locks). */
  list(ownerPrefix?: string): Promise<LockInfo[]>;
}

/** A resumable position in a source, saved after every acknowledged chunk of a backfill. */
export interface Checkpoint {
  job: string;
  /** Identifies the input: path, size and modification time, so a changed file is not resumed. */
  sourceKey: string;
  /** Every row up to and including this one has been acknowledged by the service. */
  rowsDone: number;
  updatedAt: number;
  counts: Record<string, number>;
  /**
   * What the backfill sends and where: the job's target and mapping (JSON). Absent in a
   * checkpoint saved by an adsync before schema 4.
   */
  upload?: string;
}

export interface Checkpoints {
  get(job: string): Promise<Checkpoint | undefined>;
  save(checkpoint: Checkpoint): Promise<void>;
  clear(job: string): Promise<void>;
}


export type AudienceMode = 'mirror' | 'add' | 'remove';

export interface AudiencePlanCounts {
  /** Identifiers to add (new, or last sent before the refresh time). */
  adds: number;
  /** Identifiers to remove. */
  removes: number;
  /** Identifiers in the export that need no request. */
  unchanged: number;
  /** Members known before this run. */
  members: number;
  /** Distinct identifiers in the export. */
  distinct: number;
  /** `members` by type (counted in the same pass as the plan). */
  membersByField: CountsByField;
  /** `removes` by type. */
  removesByField: CountsByField;
}

/**
 * One pass over an export: the identifiers are collected (sorted and deduplicated, on disk),
 * then the plan is read as streams of adds and removes.
 */
export interface AudienceScan {
  /** Adds the export's identifiers (with the row each came from). Copies them: the caller may reuse `batch` once this resolves. */
  add(batch: IdentifierList): Promise<void>;
  /** Distinct identifiers collected so far. */
  size(): Promise<number>;
  /**
   * Makes the plan (no identifier may be added after the first plan): what the export adds and
   * removes against the members as they are now. adds() and removes() with the same options
   * then stream exactly the plan counted, whatever is committed meanwhile.
   */
  counts(options: AudiencePlanOptions): Promise<AudiencePlanCounts>;
  /**
   * Additions, `batchSize` at a time, in (field, value) order: each batch is a contiguous key
   * range, so committing it touches the members table in order. `row` is the first export
   * row the identifier appeared in. A page is valid until the next one is asked for (copy what
   * must live longer).
   */
  adds(options: AudiencePlanOptions, batchSize: number): AsyncGenerator<IdentifierList>;
  /** Removals, `batchSize` at a time, in (field, value) order (row 0); a page is valid until the next one is asked for. */
  removes(options: AudiencePlanOptions, batchSize: number): AsyncGenerator<IdentifierList>;
  /**
   * Writes the plan's additions to the audience's members ahead of their upload, each under the
   * marker of its bucket of rows, as not yet sent: they count as sent only once their bucket is
   * confirmed (StagedAdds.confirm). Returns the handle the upload reports to. A run's additions
   * go out in row order, each row's identifiers as one user record, while the state takes them
   * in (field, value) order: staging is what lets both be fast. Once per scan; `runId` names the
   * run in the state (for whoever reads it).
   */
  stageAdds(options: AudiencePlanOptions, runId: string): Promise<StagedAdds>;
  /** Waits for what the scan's staged additions still write, then lets the scan's files go. */
  close(): Promise<void>;
}

/**
 * The staged additions of a plan (AudienceScan.stageAdds): read in row order for the upload,
 * confirmed by bucket of rows as the service acknowledges them. A bucket never confirmed (its
 * upload failed, was stopped or killed) is not sent as far as the state knows: the next run
 * sends it again. Writes happen in the order asked for, in the background; close() waits for
 * them.
 */
export interface StagedAdds {
  /** The bucket of rows that identifiers of `row` are confirmed with. */
  bucketOf(row: number): number;
  /**
   * The additions in pages of about `pageSize` identifiers: rows in export order, a row's
   * identifiers together (in (field, value) order) and never split across pages. A page is
   * valid until the next one is asked for.
   */
  pages(pageSize: number): AsyncGenerator<IdentifierList>;
  /**
   * Every request carrying identifiers of the bucket's rows was acknowledged, or its identifiers
   * were withdrawn: the bucket's other additions are members now.
   */
  confirm(bucket: number): void;
  /** These staged identifiers were not acknowledged (refused, their request failed or was never sent): never confirmed. */
  withdraw(ids: IdentifierList): void;
  /** Withdraws the additions of `row`'s bucket from rows after `row` (the upload stopped there). */
  withdrawRowsAfter(row: number): void;
  /** Throws the first failure of a write (staging, a confirmation) so far, if any. */
  throwIfFailed(): void;
  /** Waits until every write asked for is done; rejects with the first failure. */
  close(): Promise<void>;
}

export interface AudiencePlanOptions {
  mode: AudienceMode;
  /** Members last sent before this time (epoch ms) are sent again. */
  refreshBefore: number;
  /** Ignore the saved state: send every identifier of the export. */
  full: boolean;
}

export interface AudienceState {
  scan(): Promise<AudienceScan>;
  /** Records an acknowledged chunk: the adds are members (sent now), the removes are not. */
  commit(chunk: { added?: IdentifierList | undefined; removed?: IdentifierList | undefined; sentAt: number; mode: AudienceMode }): Promise<void>;
  /**
   * Members about to be removed: whether the service still has them is unknown until the
   * removal is committed (a kill or a lost answer may leave them removed), so their sent time
   * is forgotten, and a run that finds them in the export again sends them again (as it
   * re-sends members last sent before refresh_after_days).
   */
  forgetSent(ids: IdentifierList): Promise<void>;
  memberCount(): Promise<number>;
  /** Per-field member counts. */
  memberCounts(): Promise<CountsByField>;
}

export interface ScannedProduct {
  id: string;
  /** Item (or data row) number in the feed. */
  row: number;
  /** Line of the feed where the item starts, for the rejects file (0 when unknown). */
  line?: number | undefined;
  contentHash: string;
  /** The product as sent, serialized JSON (as text, or as its UTF-8 bytes). */
  payload: string | Buffer;
  /**
   * The item's raw fingerprint (SHA-256 of its bytes and of how they are read, see
   * src/jobs/catalog-feed-scan.ts), when known: saved with the product once the service has
   * it, so that a later run finding the same bytes skips reading them.
   */
  fingerprint?: Buffer | undefined;
  /** The item's feed warnings (fields not sent...), saved with the fingerprint. */
  warnings?: readonly string[] | undefined;
}

/** An occurrence of an id whose item was rejected: the id is in the feed, but not sent. */
export interface RejectedOccurrence {
  id: string;
  row: number;
  rejected: true;
}

/**
 * An occurrence whose raw fingerprint is the one saved for this product: the same bytes, read
 * the same way, as the product the service has. Unchanged, and never read.
 */
export interface UnchangedOccurrence {
  id: string;
  row: number;
  line?: number | undefined;
  unchanged: true;
}

/** One occurrence of an id in the feed: valid, rejected, or known unchanged. */
export type ScannedOccurrence = ScannedProduct | RejectedOccurrence | UnchangedOccurrence;

/** The product whose saved raw fingerprint an item has. */
export interface FingerprintMatch {
  id: string;
  /** The feed warnings the item had when it was read. */
  warnings: readonly string[];
}

/**
 * Where another thread finds a catalog's saved raw fingerprints through a connection of its own
 * (openFingerprintLookup): the database file and the catalog's row in it.
 */
export interface FingerprintLookupAddress {
  database: string;
  catalog: number;
}

/** CatalogState.productsByFingerprint on a thread of its own, synchronous. */
export interface FingerprintLookup {
  find(fingerprints: readonly Buffer[]): (FingerprintMatch | undefined)[];
  close(): void;
}

/** An acknowledged upsert: what the service now holds. */
export interface CommittedProduct {
  id: string;
  contentHash: string | null;
  productKey: string | null;
}

export interface CatalogPlanCounts {
  /** Valid products in the feed (after duplicates). */
  products: number;
  creates: number;
  updates: number;
  unchanged: number;
  deletes: number;
  /**
   * Products in the saved state before this run (or in the service, see CatalogScan.compareWith)
   * that a mirror run of this job may delete: its own and those of no job.
   */
  known: number;
}

export interface ProductToSend {
  id: string;
  row: number;
  line: number;
  contentHash: string;
  /** The product as sent: serialized JSON, as text or as its UTF-8 bytes. */
  payload: string | Buffer;
  /** True when the product is not in the saved state. */
  isNew: boolean;
}

export interface ProductToDelete {
  id: string;
  productKey: string;
}

/** A product as the service lists it (GET products): for rebuilding lost state. */
export interface ServiceProduct {
  id: string;
  productKey: string;
}

export interface CatalogScan {
  /**
   * Adds the occurrences of ids, in feed order: a later occurrence of an id replaces the
   * earlier one, valid or not. A rejected occurrence is not sent and its id is never deleted
   * by a mirror run.
   */
  add(batch: readonly ScannedOccurrence[]): Promise<void>;
  /** add() of rejected occurrences of these ids. */
  keep(ids: readonly string[]): Promise<void>;
  /** Occurrences that a later occurrence of the same id replaced. */
  duplicates(): Promise<number>;
  /**
   * Plans against these products (what the service holds) instead of the saved state, which
   * is left untouched: for a dry run when the saved state is empty. Returns their number.
   */
  compareWith(products: AsyncIterable<readonly ServiceProduct[]>): Promise<number>;
  counts(options: { mirror: boolean; full: boolean }): Promise<CatalogPlanCounts>;
  /**
   * Saves the raw fingerprints of the feed's items whose products the saved state now holds
   * as they read (sent and acknowledged, or found unchanged). Returns how many were saved.
   * commitUpserts forgets a product's fingerprint (its content changed); this saves them all
   * at once, in one pass, at the end of a run.
   */
  saveFingerprints(): Promise<number>;
  /**
   * Makes the products of the saved state that this feed holds (valid items) the job's own,
   * so that a mirror run of another job on the catalog no longer deletes them. Returns how
   * many were taken from each other job (by name): the same product in two jobs' feeds.
   */
  claim(): Promise<Map<string, number>>;
  /** Products to create or update, in feed order. */
  upserts(options: { full: boolean }, batchSize: number): AsyncGenerator<ProductToSend[]>;
  deletes(batchSize: number): AsyncGenerator<ProductToDelete[]>;
  close(): Promise<void>;
}

export interface CatalogState {
  scan(): Promise<CatalogScan>;
  productCount(): Promise<number>;
  /** Whether the saved state lists any product of the catalog (one row read, not a count). */
  hasProducts(): Promise<boolean>;
  /** Whether any product has a saved raw fingerprint. */
  hasFingerprints(): Promise<boolean>;
  /** For each raw fingerprint, the product it was saved for (undefined when none). */
  productsByFingerprint(fingerprints: readonly Buffer[]): Promise<(FingerprintMatch | undefined)[]>;
  /** Where another thread can look fingerprints up itself; undefined when none can (an in-memory state). */
  fingerprintLookupAddress(): FingerprintLookupAddress | undefined;
  /**
   * Acknowledged upserts: the product's content hash and key as the service now holds them
   * (its raw fingerprint is forgotten: see CatalogScan.saveFingerprints).
   */
  commitUpserts(products: readonly CommittedProduct[], sentAt: number): Promise<void>;
  /**
   * Products of the state about to be sent again: their content in the service is unknown
   * until their answer is committed (a kill or a lost answer may leave the new content in
   * the service), so a later run sends them whatever the feed then holds.
   */
  forgetContent(ids: readonly string[]): Promise<void>;
  commitDeletes(ids: readonly string[]): Promise<void>;
  /** Replaces the saved state with what the service holds (content unknown): used when the state was empty or lost. */
  rebuild(products: AsyncIterable<readonly ServiceProduct[]>): Promise<number>;
  /**
   * Makes the saved products those the service holds: adds the ones it lacks (content
   * unknown, so they are sent again while in the feed, deleted once not), forgets the ones the
   * service no longer has, keeps the content of the others. Used after an interrupted upload.
   * The added ones are the products of the job whose upload was marked (of no job when uploads
   * of several jobs were), whichever job reconciles.
   */
  reconcile(products: AsyncIterable<readonly ServiceProduct[]>): Promise<{ added: number; forgotten: number }>;
  /** Whether an upload to this catalog began and did not end with every answer committed. */
  uploadInterrupted(): Promise<boolean>;
  /** Marks an upload of this job as begun (kept if already set: an earlier one was interrupted; of no job once several jobs' are). */
  beginUpload(): Promise<void>;
  /** Marks the uploads as ended with every answer committed (or reconciled). */
  endUpload(): Promise<void>;
  /** Product keys of the given ids, for manual product sets. */
  productKeys(ids: readonly string[]): Promise<Map<string, string>>;
  productSetId(name: string): Promise<string | undefined>;
  saveProductSet(name: string, id: string): Promise<void>;
}

export interface StateStore {
  readonly path: string;
  readonly runs: RunHistory;
  readonly locks: JobLocks;
  readonly checkpoints: Checkpoints;
  /** `key` names the audience: "custom_audience:<account>:<id>" or "do_not_reach:<account>:<id>". */
  audience(key: string): AudienceState;
  /**
   * `job`: the job that reads and writes it. Products it commits are that job's, and a mirror
   * run deletes only the job's own products and those of no job. null: products of no job,
   * and every product may be deleted (tests of the state alone).
   */
  catalog(catalogId: string, job: string | null): CatalogState;
  integrityCheck(): Promise<string>;
  close(): Promise<void>;
}
