/** A job as the runner uses it: the job file resolved, with the settings' defaults applied. */
import type { ProductSetInput } from '../api/resources/catalogs.js';
import type { RetrySettings } from '../api/retry.js';
import type { AlertSettings } from '../config/settings.js';
import type { IdentifierType } from '../hash/types.js';
import type { SourceSpec } from '../sources/types.js';
import type { AudienceMode } from '../state/store.js';

export interface JobBase {
  /** Unique name: the run history, locks and checkpoints are keyed by it. */
  name: string;
  /** Absolute path of the job file. */
  file: string;
  accountId: string;
  /** Credentials profile; undefined = the ADSYNC_* variables. */
  credentials: string | undefined;
  schedule: string | undefined;
  timezone: string;
  source: SourceSpec;
  maxRejectRatio: number;
  alerts: AlertSettings;
  concurrency: number;
  requestTimeoutMs: number;
  retry: RetrySettings;
}

export interface AudienceJobSpec {
  mode: AudienceMode;
  /** Identifier type -> source column name. */
  identifiers: Partial<Record<IdentifierType, string>>;
  countryColumn: string | undefined;
  /** ISO 3166-1 alpha-2, upper case. */
  defaultCountry: string | undefined;
  refreshAfterDays: number;
  maxRemoveRatio: number;
}

export interface CustomAudienceJob extends JobBase {
  kind: 'custom_audience';
  customAudienceId: string;
  audience: AudienceJobSpec;
}

export interface DoNotReachJob extends JobBase {
  kind: 'do_not_reach';
  doNotReachListId: string;
  audience: AudienceJobSpec;
}

export type AudienceJob = CustomAudienceJob | DoNotReachJob;

export type ProductSetSpec = ({ type: 'MANUAL'; productIds: string[] } | { type: 'FILTERED'; filters: Extract<ProductSetInput, { type: 'FILTERED' }>['filters'] }) & {
  name: string;
  description: string | undefined;
};

export interface CatalogJob extends JobBase {
  kind: 'catalog';
  catalog: {
    catalogId: string;
    mode: 'mirror' | 'upsert';
    maxDeleteRatio: number;
    /** Product attribute -> source field name. */
    fields: Record<string, string>;
    productSets: ProductSetSpec[];
  };
}

export type Job = AudienceJob | CatalogJob;

/** The state key of an audience job's audience. */
export function audienceKey(job: AudienceJob): string {
  return job.kind === 'custom_audience'
    ? `custom_audience:${job.accountId}:${job.customAudienceId}`
    : `do_not_reach:${job.accountId}:${job.doNotReachListId}`;
}
