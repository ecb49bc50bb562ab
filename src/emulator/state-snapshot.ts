/**
 * What GET /_emulator/state shows: the catalogs' products (attributes and product_key), the
 * members of every audience and do-not-reach list per identifier field (sorted), and the
 * request counters; with summary=1 only the counts, for states too large to list.
 */
import type { AudienceMembership } from './audience-membership.js';
import type { RequestCounts } from './request-counters.js';
import type { EmulatorStore } from './store.js';

export interface AudienceState<Members> {
  account_id: string;
  name: string;
  deleted: boolean;
  members: Members;
}

export interface EmulatorState {
  accounts: { id: string; name: string; deleted: boolean }[];
  catalogs: Record<string, { name: string; deleted: boolean; products: Record<string, unknown>[] }>;
  custom_audiences: Record<string, AudienceState<Record<string, string[]>>>;
  do_not_reach_lists: Record<string, AudienceState<Record<string, string[]>>>;
  requests: RequestCounts;
}

export interface EmulatorStateSummary {
  accounts: number;
  catalogs: Record<string, { name: string; deleted: boolean; products: number }>;
  custom_audiences: Record<string, AudienceState<Record<string, number>>>;
  do_not_reach_lists: Record<string, AudienceState<Record<string, number>>>;
  requests: RequestCounts;
}

interface AudienceLike {
  id: string;
  accountId: string;
  name: string;
  deleted: boolean;
  membership: AudienceMembership;
}

function audienceStates<M>(records: Iterable<AudienceLike>, members: (m: AudienceMembership) => M): Record<string, AudienceState<M>> {
  const out: Record<string, AudienceState<M>> = {};
  for (const r of records) out[r.id] = { account_id: r.accountId, name: r.name, deleted: r.deleted, members: members(r.membership) };
  return out;
}

export function stateSnapshot(store: EmulatorStore, requests: RequestCounts): EmulatorState {
  const catalogs: EmulatorState['catalogs'] = {};
  for (const catalog of store.catalogs.values()) {
    catalogs[catalog.id] = {
      name: catalog.name,
      deleted: catalog.deleted,
      products: [...catalog.products()].map((p) => ({ product_key: p.productKey, ...p.attributes })),
    };
  }
  return {
    accounts: [...store.accounts.values()].map((a) => ({ id: a.id, name: a.name, deleted: a.deleted })),
    catalogs,
    custom_audiences: audienceStates(store.customAudiences.values(), (m) => m.snapshot()),
    do_not_reach_lists: audienceStates(store.doNotReachLists.values(), (m) => m.snapshot()),
    requests,
  };
}

export function stateSummary(store: EmulatorStore, requests: RequestCounts): EmulatorStateSummary {
  const catalogs: EmulatorStateSummary['catalogs'] = {};
  for (const c of store.catalogs.values()) catalogs[c.id] = { name: c.name, deleted: c.deleted, products: c.size };
  return {
    accounts: store.accounts.size,
    catalogs,
    custom_audiences: audienceStates(store.customAudiences.values(), (m) => m.sizes()),
    do_not_reach_lists: audienceStates(store.doNotReachLists.values(), (m) => m.sizes()),
    requests,
  };
}
