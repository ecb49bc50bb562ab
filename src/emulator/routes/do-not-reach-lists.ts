/**
 * Do-not-reach lists:
 * - POST /12/batch/accounts/:account_id/do_not_reach_lists/:do_not_reach_list_id/users: the
 *   user batch (users of email and phone_number arrays, or the documented variant
 *   params.emails with a required expires_at; expires_at in UTC); data is an array
 *   [{success_count, total_count}] and request an array;
 * - GET /12/accounts/:account_id/do_not_reach_lists/:do_not_reach_list_id (with_deleted);
 * - DELETE the same path: soft delete, answered with deleted: true.
 */
import { applyAudienceBatch, type AudienceBatchRules } from '../audience-batch.js';
import { planAudienceBatchRequest } from '../audience-batch-reader.js';
import { dataAnswer, requestEcho } from '../envelope.js';
import { requireDoNotReachList } from '../record-lookup.js';
import type { RouteContext } from '../route-context.js';
import type { RouteDefinition } from '../routing.js';
import { DO_NOT_REACH_HASHED_FIELDS, type DoNotReachListRecord } from '../store.js';
import { targetability } from './custom-audiences.js';

export const DO_NOT_REACH_BATCH_RULES: AudienceBatchRules = {
  hashedFields: DO_NOT_REACH_HASHED_FIELDS,
  rawFields: [],
  effectiveAt: false,
  emailsVariant: true,
  utcOnly: true,
};

export function doNotReachListJson(list: DoNotReachListRecord): Record<string, unknown> {
  const size = list.membership.totalSize();
  return {
    id: list.id,
    name: list.name,
    description: list.description,
    ...targetability(size),
    list_size: size,
    created_at: list.createdAt,
    updated_at: list.updatedAt,
    deleted: list.deleted,
  };
}

export function doNotReachListRoutes(ctx: RouteContext): RouteDefinition[] {
  const { store } = ctx;
  const listPath = '/12/accounts/:account_id/do_not_reach_lists/:do_not_reach_list_id';
  return [
    {
      method: 'POST',
      pattern: '/12/batch/accounts/:account_id/do_not_reach_lists/:do_not_reach_list_id/users',
      auth: 'access_token',
      family: 'do_not_reach_users',
      bodyIsTransient: true,
      handle(req) {
        const list = requireDoNotReachList(store, req.pathParams.account_id, req.pathParams.do_not_reach_list_id);
        const plan = planAudienceBatchRequest(req, DO_NOT_REACH_BATCH_RULES);
        applyAudienceBatch(plan, DO_NOT_REACH_BATCH_RULES, list.membership);
        list.updatedAt = store.timestamp();
        const total = plan.userRecords;
        return {
          status: 200,
          json: { request: [requestEcho(req)], data: [{ success_count: req.countMismatch ? total - 1 : total, total_count: total }] },
        };
      },
    },
    {
      method: 'GET',
      pattern: listPath,
      auth: 'access_token',
      handle(req) {
        const { account_id, do_not_reach_list_id } = req.pathParams;
        return dataAnswer(req, doNotReachListJson(requireDoNotReachList(store, account_id, do_not_reach_list_id, req.params.boolean('with_deleted', false))));
      },
    },
    {
      method: 'DELETE',
      pattern: listPath,
      auth: 'access_token',
      handle(req) {
        const list = requireDoNotReachList(store, req.pathParams.account_id, req.pathParams.do_not_reach_list_id);
        list.deleted = true;
        list.updatedAt = store.timestamp();
        return dataAnswer(req, doNotReachListJson(list));
      },
    },
  ];
}
