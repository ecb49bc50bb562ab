/**
 * Finding the record a path names, with the service's 404s: NOT_FOUND for accounts,
 * catalogs, lists and permissions, TAILORED_AUDIENCE_NOT_FOUND for custom audiences.
 * A soft-deleted record is found only when with_deleted is asked for.
 */
import { notFound } from './errors.js';
import type { ProductCatalog } from './product-catalog.js';
import type { AccountRecord, CustomAudienceRecord, DoNotReachListRecord, EmulatorStore } from './store.js';

export function requireAccount(store: EmulatorStore, accountId: string | undefined, withDeleted = false): AccountRecord {
  const account = accountId === undefined ? undefined : store.accounts.get(accountId);
  if (!account || (account.deleted && !withDeleted)) throw notFound(`account ${accountId ?? ''} was not found`);
  return account;
}

/** A live catalog (catalog deletion is permanent). */
export function requireCatalog(store: EmulatorStore, catalogId: string | undefined): ProductCatalog {
  const catalog = catalogId === undefined ? undefined : store.catalogs.get(catalogId);
  if (!catalog || catalog.deleted) throw notFound(`product catalog ${catalogId ?? ''} was not found`);
  return catalog;
}

export function requireCustomAudience(
  store: EmulatorStore,
  accountId: string | undefined,
  audienceId: string | undefined,
  withDeleted = false,
): CustomAudienceRecord {
  const account = requireAccount(store, accountId);
  const audience = audienceId === undefined ? undefined : store.customAudiences.get(audienceId);
  if (!audience || audience.accountId !== account.id || (audience.deleted && !withDeleted)) {
    throw notFound(`custom audience ${audienceId ?? ''} was not found in account ${account.id}`, 'TAILORED_AUDIENCE_NOT_FOUND');
  }
  return audience;
}

export function requireDoNotReachList(
  store: EmulatorStore,
  accountId: string | undefined,
  listId: string | undefined,
  withDeleted = false,
): DoNotReachListRecord {
  const account = requireAccount(store, accountId);
  const list = listId === undefined ? undefined : store.doNotReachLists.get(listId);
  if (!list || list.accountId !== account.id || (list.deleted && !withDeleted)) {
    throw notFound(`do-not-reach list ${listId ?? ''} was not found in account ${account.id}`);
  }
  return list;
}
