/**
 * Custom audiences:
 * - GET /12/accounts/:account_id/custom_audiences/:custom_audience_id (with_deleted);
 * - GET .../targeted (with_active, cursor): the campaigns and line items targeting it;
 * - POST .../users: the user batch (JSON array of at most 2500 operations, 5,000,000 bytes);
 *   data is {success_count, total_count}, counting user records.
 */
import { applyAudienceBatch, type AudienceBatchRules } from '../audience-batch.js';
import { planAudienceBatchRequest } from '../audience-batch-reader.js';
import { PARTNER_USER_ID } from '../audience-membership.js';
import { dataAnswer, listAnswer } from '../envelope.js';
import { decodeCursor, pageOf } from '../pagination.js';
import { requireCustomAudience } from '../record-lookup.js';
import type { RouteContext } from '../route-context.js';
import type { RouteDefinition } from '../routing.js';
import { CUSTOM_AUDIENCE_HASHED_FIELDS, type CustomAudienceRecord } from '../store.js';

/** An audience is usable from 100 matched users. */
export const MIN_TARGETABLE_SIZE = 100;
const TARGETED_PAGE_SIZE = 200;

export const CUSTOM_AUDIENCE_BATCH_RULES: AudienceBatchRules = {
  hashedFields: CUSTOM_AUDIENCE_HASHED_FIELDS,
  rawFields: [PARTNER_USER_ID],
  effectiveAt: true,
  emailsVariant: false,
  utcOnly: false,
};

/** targetable and reasons_not_targetable of an audience or list of `size` members. */
export function targetability(size: number): { targetable: boolean; reasons_not_targetable: string[] } {
  return size >= MIN_TARGETABLE_SIZE ? { targetable: true, reasons_not_targetable: [] } : { targetable: false, reasons_not_targetable: ['TOO_SMALL'] };
}

export function customAudienceJson(audience: CustomAudienceRecord): Record<string, unknown> {
  const size = audience.membership.totalSize();
  return {
    id: audience.id,
    account_id: audience.accountId,
    name: audience.name,
    description: audience.description,
    audience_type: 'WEB',
    audience_size: size,
    ...targetability(size),
    is_owner: true,
    permission_level: 'READ_WRITE',
    owner_account_id: audience.accountId,
    created_at: audience.createdAt,
    updated_at: audience.updatedAt,
    deleted: audience.deleted,
  };
}

export function customAudienceRoutes(ctx: RouteContext): RouteDefinition[] {
  const { store } = ctx;
  const base = '/12/accounts/:account_id/custom_audiences/:custom_audience_id';
  return [
    {
      method: 'GET',
      pattern: base,
      auth: 'access_token',
      handle(req) {
        const { account_id, custom_audience_id } = req.pathParams;
        const audience = requireCustomAudience(store, account_id, custom_audience_id, req.params.boolean('with_deleted', false));
        return dataAnswer(req, customAudienceJson(audience));
      },
    },
    {
      method: 'GET',
      pattern: `${base}/targeted`,
      auth: 'access_token',
      handle(req) {
        const audience = requireCustomAudience(store, req.pathParams.account_id, req.pathParams.custom_audience_id);
        const withActive = req.params.boolean('with_active', true);
        const paging = { count: TARGETED_PAGE_SIZE, afterSeq: 0, withTotalCount: false };
        const cursor = req.params.get('cursor');
        if (cursor !== undefined) paging.afterSeq = decodeCursor(cursor);
        const entries = audience.targeted
          .map((campaign, i) => ({
            seq: i + 1,
            entry: { ...campaign, line_items: campaign.line_items.filter((li) => !withActive || li.servable) },
          }))
          .filter(({ entry }) => entry.line_items.length > 0);
        const page = pageOf(entries, paging);
        return listAnswer(req, page.items.map((e) => e.entry), page.nextCursor);
      },
    },
    {
      method: 'POST',
      pattern: `${base}/users`,
      auth: 'access_token',
      family: 'audience_users',
      bodyIsTransient: true,
      handle(req) {
        const audience = requireCustomAudience(store, req.pathParams.account_id, req.pathParams.custom_audience_id);
        const plan = planAudienceBatchRequest(req, CUSTOM_AUDIENCE_BATCH_RULES);
        applyAudienceBatch(plan, CUSTOM_AUDIENCE_BATCH_RULES, audience.membership);
        audience.updatedAt = store.timestamp();
        const total = plan.userRecords;
        return dataAnswer(req, { success_count: req.countMismatch ? total - 1 : total, total_count: total });
      },
    },
  ];
}
