/**
 * Tailored audience permissions (version 5), under
 * /5/accounts/:account_id/tailored_audiences/:tailored_audience_id/permissions:
 * - GET: count 1-1000 (default 200), cursor, granted_account_ids and
 *   tailored_audience_permission_ids (up to 200 each), with_deleted, with_total_count;
 * - POST: granted_account_id and permission_level (READ_ONLY or READ_WRITE), by the owning
 *   account only, to another account of the same business;
 * - DELETE .../:tailored_audience_permission_id: revokes (deleted: true).
 */
import { invalidParameter, notFound } from '../errors.js';
import { dataAnswer, listAnswer } from '../envelope.js';
import { pageOf, readPaging, refuseSortBy } from '../pagination.js';
import { requireCustomAudience } from '../record-lookup.js';
import type { RouteContext } from '../route-context.js';
import type { RouteDefinition } from '../routing.js';
import type { PermissionLevel, PermissionRecord } from '../store.js';

export const PERMISSION_LEVELS: readonly PermissionLevel[] = ['READ_ONLY', 'READ_WRITE'];

export function permissionJson(p: PermissionRecord): Record<string, unknown> {
  return {
    id: p.id,
    tailored_audience_id: p.tailoredAudienceId,
    permission_level: p.permissionLevel,
    granted_account_id: p.grantedAccountId,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    deleted: p.deleted,
  };
}

export function permissionRoutes(ctx: RouteContext): RouteDefinition[] {
  const { store } = ctx;
  const base = '/5/accounts/:account_id/tailored_audiences/:tailored_audience_id/permissions';
  const audienceOf = (pathParams: Readonly<Record<string, string>>) =>
    requireCustomAudience(store, pathParams.account_id, pathParams.tailored_audience_id);
  return [
    {
      method: 'GET',
      pattern: base,
      auth: 'access_token',
      handle(req) {
        const audience = audienceOf(req.pathParams);
        const paging = readPaging(req.params, 200, 1000);
        const granted = req.params.list('granted_account_ids', 200);
        const ids = req.params.list('tailored_audience_permission_ids', 200);
        const withDeleted = req.params.boolean('with_deleted', false);
        refuseSortBy(req.params);
        const matching = [...store.permissions.values()].filter(
          (p) =>
            p.tailoredAudienceId === audience.id &&
            (withDeleted || !p.deleted) &&
            (!granted || granted.includes(p.grantedAccountId)) &&
            (!ids || ids.includes(p.id)),
        );
        const page = pageOf(matching, paging);
        return listAnswer(req, page.items.map(permissionJson), page.nextCursor, paging.withTotalCount ? matching.length : undefined);
      },
    },
    {
      method: 'POST',
      pattern: base,
      auth: 'access_token',
      handle(req) {
        const audience = audienceOf(req.pathParams);
        const grantedAccountId = req.params.required('granted_account_id');
        const level = req.params.enumValue('permission_level', PERMISSION_LEVELS, true);
        const owner = store.accounts.get(audience.accountId);
        const granted = store.accounts.get(grantedAccountId);
        if (grantedAccountId === audience.accountId) {
          throw invalidParameter('granted_account_id', 'an audience cannot be shared with the account that owns it');
        }
        if (!granted || granted.deleted || granted.business_id !== owner?.business_id) {
          throw invalidParameter(
            'granted_account_id',
            `account ${grantedAccountId} is not in the business of account ${audience.accountId}; sharing outside the business needs the account feature SHARE_AUDIENCE_OUTSIDE_BUSINESS`,
          );
        }
        const duplicate = [...store.permissions.values()].some(
          (p) => p.tailoredAudienceId === audience.id && p.grantedAccountId === grantedAccountId && !p.deleted,
        );
        if (duplicate) throw invalidParameter('granted_account_id', `account ${grantedAccountId} already holds a permission on this audience`);
        const t = store.timestamp();
        const permission: PermissionRecord = {
          seq: store.nextSeq(),
          id: store.newId(),
          accountId: audience.accountId,
          tailoredAudienceId: audience.id,
          grantedAccountId,
          permissionLevel: level,
          createdAt: t,
          updatedAt: t,
          deleted: false,
        };
        store.permissions.set(permission.id, permission);
        return dataAnswer(req, permissionJson(permission));
      },
    },
    {
      method: 'DELETE',
      pattern: `${base}/:tailored_audience_permission_id`,
      auth: 'access_token',
      handle(req) {
        const audience = audienceOf(req.pathParams);
        const id = req.pathParams.tailored_audience_permission_id ?? '';
        const permission = store.permissions.get(id);
        if (!permission || permission.tailoredAudienceId !== audience.id || permission.deleted) {
          throw notFound(`permission ${id} was not found on audience ${audience.id}`);
        }
        permission.deleted = true;
        permission.updatedAt = store.timestamp();
        return dataAnswer(req, permissionJson(permission));
      },
    },
  ];
}
