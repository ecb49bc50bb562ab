/**
 * Accounts: GET /12/accounts (account_ids, count 1-1000, cursor, q, with_deleted,
 * with_total_count), GET /12/accounts/:account_id (with_deleted), and the sandbox's
 * POST /12/accounts and DELETE /12/accounts/:account_id (soft delete).
 */
import { dataAnswer, listAnswer } from '../envelope.js';
import { pageOf, readPaging, refuseSortBy } from '../pagination.js';
import { requireAccount } from '../record-lookup.js';
import type { RouteContext } from '../route-context.js';
import type { RouteDefinition } from '../routing.js';
import type { AccountRecord } from '../store.js';

export function accountJson(account: AccountRecord): Omit<AccountRecord, 'seq'> {
  const { seq: _seq, ...fields } = account;
  return fields;
}

export function accountRoutes(ctx: RouteContext): RouteDefinition[] {
  const { store } = ctx;
  return [
    {
      method: 'GET',
      pattern: '/12/accounts',
      auth: 'access_token',
      handle(req) {
        const paging = readPaging(req.params, 200, 1000);
        const ids = req.params.list('account_ids', 200);
        const q = req.params.get('q')?.toLowerCase();
        const withDeleted = req.params.boolean('with_deleted', false);
        refuseSortBy(req.params);
        const matching = [...store.accounts.values()].filter(
          (a) => (withDeleted || !a.deleted) && (!ids || ids.includes(a.id)) && (q === undefined || a.name.toLowerCase().startsWith(q)),
        );
        const page = pageOf(matching, paging);
        return listAnswer(req, page.items.map(accountJson), page.nextCursor, paging.withTotalCount ? matching.length : undefined);
      },
    },
    {
      method: 'GET',
      pattern: '/12/accounts/:account_id',
      auth: 'access_token',
      handle(req) {
        const account = requireAccount(store, req.pathParams.account_id, req.params.boolean('with_deleted', false));
        return dataAnswer(req, accountJson(account));
      },
    },
    {
      method: 'POST',
      pattern: '/12/accounts',
      auth: 'access_token',
      handle(req) {
        return dataAnswer(req, accountJson(store.createAccount(`Sandbox account ${store.accounts.size + 1}`)));
      },
    },
    {
      method: 'DELETE',
      pattern: '/12/accounts/:account_id',
      auth: 'access_token',
      handle(req) {
        const account = requireAccount(store, req.pathParams.account_id);
        account.deleted = true;
        account.updated_at = store.timestamp();
        return dataAnswer(req, accountJson(account));
      },
    },
  ];
}
