/** `adsync backfill` of a catalog job: written once the catalog uploader settles (see README). */
import { ConfigError } from '../errors.js';
import type { CatalogJob } from './job.js';
import type { RunContext } from './run-context.js';

export function backfillCatalog(_ctx: RunContext, job: CatalogJob): Promise<void> {
  return Promise.reject(new ConfigError(`backfill of catalog job ${job.name} is not available yet; use \`adsync run --full\``));
}
