/**
 * Audience user batches: custom audiences and do-not-reach lists.
 *
 * Both answer success_count and total_count, counting *user records* (not operations); the
 * custom audience answer has `data` as an object, the do-not-reach answer as an array: both
 * shapes are accepted for both. Counts that differ from the records sent are a
 * CountMismatchError, which the client retries as a whole.
 */
import { z } from 'zod';
import type { AdsApiClient } from '../client.js';
import { CountMismatchError } from '../errors.js';
import type { EndpointFamily } from '../rate-limiter.js';
import { seg } from './path.js';

export type AudienceTarget =
  | { kind: 'custom_audience'; accountId: string; customAudienceId: string }
  | { kind: 'do_not_reach'; accountId: string; doNotReachListId: string };

const countSchema = z.looseObject({ success_count: z.number(), total_count: z.number() });
const countsSchema = z.union([countSchema, z.array(countSchema)]);

export interface BatchCounts {
  successCount: number;
  totalCount: number;
}

export function usersPath(target: AudienceTarget): string {
  return target.kind === 'custom_audience'
    ? `/12/accounts/${seg(target.accountId)}/custom_audiences/${seg(target.customAudienceId)}/users`
    : `/12/batch/accounts/${seg(target.accountId)}/do_not_reach_lists/${seg(target.doNotReachListId)}/users`;
}

/** The endpoint family of an audience's user batches: of a target, or of an audience job (the same kinds). */
export function usersFamily(target: Pick<AudienceTarget, 'kind'>): EndpointFamily {
  return target.kind === 'custom_audience' ? 'audience_users' : 'do_not_reach_users';
}

function sumCounts(data: z.infer<typeof countsSchema>): BatchCounts {
  const list = Array.isArray(data) ? data : [data];
  return {
    successCount: list.reduce((n, c) => n + c.success_count, 0),
    totalCount: list.reduce((n, c) => n + c.total_count, 0),
  };
}

/**
 * Sends one prebuilt batch body (a JSON array of operations, built once as a Buffer and
 * reused on retries) and verifies that the service counted every user record.
 */
export async function postAudienceUsers(
  client: AdsApiClient,
  target: AudienceTarget,
  body: Buffer,
  userRecords: number,
): Promise<BatchCounts> {
  const path = usersPath(target);
  const envelope = await client.call(
    { method: 'POST', path, json: body, family: usersFamily(target) },
    (data) => sumCounts(countsSchema.parse(data)),
    ({ data }) => {
      if (data.successCount !== userRecords || data.totalCount !== userRecords) {
        throw new CountMismatchError('POST', path, userRecords, data.successCount, data.totalCount);
      }
    },
  );
  return envelope.data;
}

const customAudienceSchema = z.looseObject({ id: z.string(), name: z.string().optional(), deleted: z.boolean().optional() });
export type CustomAudience = z.infer<typeof customAudienceSchema>;

export async function getCustomAudience(client: AdsApiClient, accountId: string, customAudienceId: string): Promise<CustomAudience> {
  const env = await client.call(
    { method: 'GET', path: `/12/accounts/${seg(accountId)}/custom_audiences/${seg(customAudienceId)}`, family: 'audiences' },
    (d) => customAudienceSchema.parse(d),
  );
  return env.data;
}

const doNotReachListSchema = z.looseObject({ id: z.string(), name: z.string().optional(), deleted: z.boolean().optional() });
export type DoNotReachList = z.infer<typeof doNotReachListSchema>;

export async function deleteDoNotReachList(client: AdsApiClient, accountId: string, listId: string): Promise<DoNotReachList> {
  const env = await client.call(
    { method: 'DELETE', path: `/12/accounts/${seg(accountId)}/do_not_reach_lists/${seg(listId)}`, family: 'audiences' },
    (d) => doNotReachListSchema.parse(d),
  );
  return env.data;
}

const targetedSchema = z.array(
  z.looseObject({
    campaign_id: z.string(),
    campaign_name: z.string().optional(),
    line_items: z.array(z.looseObject({ id: z.string(), name: z.string().optional(), servable: z.boolean().optional() })),
  }),
);
export type TargetedEntry = z.infer<typeof targetedSchema>[number];

export async function* listTargeted(
  client: AdsApiClient,
  accountId: string,
  customAudienceId: string,
  withActive = true,
): AsyncGenerator<TargetedEntry[]> {
  yield* client.paginate(
    {
      method: 'GET',
      path: `/12/accounts/${seg(accountId)}/custom_audiences/${seg(customAudienceId)}/targeted`,
      query: { with_active: withActive },
      family: 'audiences',
    },
    (d) => targetedSchema.parse(d),
  );
}

const permissionSchema = z.looseObject({
  id: z.string(),
  tailored_audience_id: z.string(),
  permission_level: z.enum(['READ_ONLY', 'READ_WRITE']),
  granted_account_id: z.string(),
  deleted: z.boolean().optional(),
});
export type AudiencePermission = z.infer<typeof permissionSchema>;

function permissionsPath(accountId: string, audienceId: string): string {
  return `/5/accounts/${seg(accountId)}/tailored_audiences/${seg(audienceId)}/permissions`;
}

export async function grantAudiencePermission(
  client: AdsApiClient,
  accountId: string,
  audienceId: string,
  grantedAccountId: string,
  level: 'READ_ONLY' | 'READ_WRITE',
): Promise<AudiencePermission> {
  const env = await client.call(
    {
      method: 'POST',
      path: permissionsPath(accountId, audienceId),
      query: { granted_account_id: grantedAccountId, permission_level: level },
      family: 'audiences',
    },
    (d) => permissionSchema.parse(d),
  );
  return env.data;
}

export async function* listAudiencePermissions(client: AdsApiClient, accountId: string, audienceId: string): AsyncGenerator<AudiencePermission[]> {
  yield* client.paginate(
    { method: 'GET', path: permissionsPath(accountId, audienceId), family: 'audiences' },
    (d) => z.array(permissionSchema).parse(d),
  );
}

export async function revokeAudiencePermission(
  client: AdsApiClient,
  accountId: string,
  audienceId: string,
  permissionId: string,
): Promise<AudiencePermission> {
  const env = await client.call(
    { method: 'DELETE', path: `${permissionsPath(accountId, audienceId)}/${seg(permissionId)}`, family: 'audiences' },
    (d) => permissionSchema.parse(d),
  );
  return env.data;
}
