/**
 * The SQLite schema, as numbered migrations. A database is migrated forward when opened;
 * a database written by a newer adsync is refused rather than misread.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE runs (
    run_id       TEXT PRIMARY KEY,
    job          TEXT NOT NULL,
    kind         TEXT NOT NULL,
    command      TEXT NOT NULL,
    status       TEXT NOT NULL,
    dry_run      INTEGER NOT NULL,
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    summary      TEXT,
    error        TEXT,
    rejects_file TEXT
  );
  CREATE INDEX runs_by_job ON runs (job, started_at);
  CREATE INDEX runs_by_start ON runs (started_at);

  CREATE TABLE locks (
    job          TEXT PRIMARY KEY,
    owner        TEXT NOT NULL,
    acquired_at  INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
  );

  CREATE TABLE checkpoints (
    job        TEXT PRIMARY KEY,
    source_key TEXT NOT NULL,
    rows_done  INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    counts     TEXT NOT NULL
  );

  CREATE TABLE audiences (
    id  INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE
  );
  -- One row per identifier ever sent to an audience. value: the 32 bytes of a SHA-256
  -- hash, or the UTF-8 bytes of a partner_user_id. present = 0 marks an identifier that a
  -- remove-mode run deleted (so it is not deleted again).
  CREATE TABLE audience_members (
    audience INTEGER NOT NULL,
    field    INTEGER NOT NULL,
    value    BLOB NOT NULL,
    present  INTEGER NOT NULL,
    sent_at  INTEGER NOT NULL,
    PRIMARY KEY (audience, field, value)
  ) WITHOUT ROWID;

  CREATE TABLE catalogs (
    id         INTEGER PRIMARY KEY,
    catalog_id TEXT NOT NULL UNIQUE
  );
  -- content_hash NULL: the product exists in the catalog but its content is unknown (state
  -- rebuilt from the service), so it is sent again.
  CREATE TABLE catalog_products (
    catalog      INTEGER NOT NULL,
    id           TEXT NOT NULL,
    content_hash TEXT,
    product_key  TEXT,
    sent_at      INTEGER,
    PRIMARY KEY (catalog, id)
  ) WITHOUT ROWID;

  CREATE TABLE catalog_product_sets (
    catalog INTEGER NOT NULL,
    name    TEXT NOT NULL,
    id      TEXT NOT NULL,
    PRIMARY KEY (catalog, name)
  );
  `,
  // 2: raw fingerprints of catalog items. raw_fp: SHA-256 of the bytes of the feed item that
  // gave the product as its content_hash says (and of how it was read: see
  // src/jobs/catalog-feed-scan.ts); a later run that finds the same bytes skips reading them.
  // NULL when unknown. feed_warnings: that item's feed warnings (JSON array), NULL for none.
  // The index answers "which product has these bytes" without reading the table; partial, so
  // that products without a fingerprint (all of them on a first run) cost it nothing.
  `
  ALTER TABLE catalog_products ADD COLUMN raw_fp BLOB;
  ALTER TABLE catalog_products ADD COLUMN feed_warnings TEXT;
  CREATE INDEX catalog_products_by_fp ON catalog_products (catalog, raw_fp, feed_warnings) WHERE raw_fp IS NOT NULL;
  `,
  // 3: upload_started_at: set while a run or backfill sends products to the catalog, cleared
  // when one ends with every answer committed. Still set when a run starts: an upload was
  // killed or lost answers, so the service may hold products that the state does not list
  // (acknowledged, not yet committed) or no longer hold ones it lists (deleted, answer lost).
  `
  ALTER TABLE catalogs ADD COLUMN upload_started_at INTEGER;
  `,
  // 4: upload: what a backfill sends and where (the job's target and mapping, as JSON); a
  // resume with other settings would skip rows that were sent with the earlier ones. NULL in
  // a checkpoint saved before: resumed without that check.
  `
  ALTER TABLE checkpoints ADD COLUMN upload TEXT;
  `,
  // 5: job: the job whose feed the product is in (the last to send it or find it unchanged
  // in its feed). A mirror run deletes only its own products and those of no job (sent before
  // this column, or learned from the service): jobs that share a catalog (one per user on X)
  // do not delete each other's products.
  `
  ALTER TABLE catalog_products ADD COLUMN job TEXT;
  `,
  // 6: upload_job: the job whose run or backfill set upload_started_at; NULL when uploads of
  // several jobs were left marked (or the mark predates this column). The products a reconcile
  // finds in the service and not in the state are that job's: its upload left them, and
  // another job's mirror run does not delete them.
  `
  ALTER TABLE catalogs ADD COLUMN upload_job TEXT;
  `,
  // 7: the runs still marked running, by job. Every run looks for its job's dead ones
  // (markAbandoned) under the write lock: through runs_by_job that read every run the job ever
  // made (~170 ms at 500,000, a year of a job every minute), a cost that grew with the history
  // for the scheduler's whole life. Partial: it holds only the runs in progress.
  `
  CREATE INDEX runs_running ON runs (job) WHERE status = 'running';
  `,
  // 8: additions staged ahead of their upload (see src/state/sqlite/member-status.ts). A run
  // sends each export row's identifiers as one user record, so its requests carry rows in row
  // order, while the members' B-tree wants them in (field, value) order: the plan's additions
  // are written ahead, in key order, each under the marker of its bucket of rows (present =
  // -2 * marker for a new member, -(2 * marker + 1) for a member sent again), and a marker
  // counts only once it is no longer listed here: the run deletes it when every request with
  // rows of its bucket was acknowledged. audience_membership reads the table as it counts.
  // AUTOINCREMENT: a marker's id is never given again once it was deleted (confirmed), or rows
  // confirmed long ago would be pending again under a new run's marker.
  `
  CREATE TABLE audience_pending (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    audience   INTEGER NOT NULL,
    run_id     TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX audience_pending_by_audience ON audience_pending (audience);
  CREATE VIEW audience_membership AS
    SELECT audience, field, value, CASE WHEN present < 0 AND (-present & 1) = 1 AND (-present >> 1) IN (SELECT id FROM audience_pending) THEN 0 ELSE sent_at END AS sent_at
    FROM audience_members
    WHERE present > 0 OR (present < 0 AND ((-present & 1) = 1 OR (-present >> 1) NOT IN (SELECT id FROM audience_pending)));
  `,
];
