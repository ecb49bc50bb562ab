/**
 * Calls of endpoints that src/api/resources has no function for yet, made through the real
 * client (AdsApiClient.call / send) so they are signed, sent and parsed like the others.
 */
import { z } from 'zod';
import type { AdsApiClient, QueryValue } from '../../src/api/client.js';
import type { Envelope } from '../../src/api/envelope.js';

const record = z.looseObject({ id: z.string(), deleted: z.boolean().optional() });
export type ApiRecord = z.infer<typeof record>;
const records = z.array(record);

export async function renameCatalog(client: AdsApiClient, catalogId: string, name: string): Promise<ApiRecord> {
  return (await client.call({ method: 'PUT', path: `/12/product_catalogs/${catalogId}`, query: { name }, family: 'catalog_write' }, (d) => record.parse(d))).data;
}

export async function deleteCatalog(client: AdsApiClient, catalogId: string): Promise<ApiRecord> {
  return (await client.call({ method: 'DELETE', path: `/12/product_catalogs/${catalogId}`, family: 'catalog_write' }, (d) => record.parse(d))).data;
}

/** The sandbox's account creation. */
export async function createSandboxAccount(client: AdsApiClient): Promise<ApiRecord> {
  return (await client.call({ method: 'POST', path: '/12/accounts', family: 'accounts' }, (d) => record.parse(d))).data;
}

export async function deleteSandboxAccount(client: AdsApiClient, accountId: string): Promise<ApiRecord> {
  return (await client.call({ method: 'DELETE', path: `/12/accounts/${accountId}`, family: 'accounts' }, (d) => record.parse(d))).data;
}

/** One page of a list, with the query given (count, cursor, with_deleted, with_total_count...). */
export function listPage(client: AdsApiClient, path: string, query: Record<string, QueryValue> = {}): Promise<Envelope<ApiRecord[]>> {
  return client.call({ method: 'GET', path, query, family: 'other' }, (d) => records.parse(d));
}

export async function getRecord(client: AdsApiClient, path: string, query: Record<string, QueryValue> = {}): Promise<ApiRecord> {
  return (await client.call({ method: 'GET', path, query, family: 'other' }, (d) => record.parse(d))).data;
}

const bearerSchema = z.object({ token_type: z.literal('bearer'), access_token: z.string() });

/** POST oauth2/token with HTTP Basic and grant_type=client_credentials. */
export function requestBearerToken(client: AdsApiClient, consumerKey: string, consumerSecret: string): Promise<string> {
  return client.send(
    {
      method: 'POST',
      path: '/oauth2/token',
      base: 'api',
      family: 'oauth',
      form: [['grant_type', 'client_credentials']],
      basicAuth: { user: consumerKey, password: consumerSecret },
    },
    (answer) => bearerSchema.parse(JSON.parse(answer.body.toString('utf8'))).access_token,
  );
}

/** POST oauth2/invalidate_token, signed with the consumer and the client's access token. */
export function invalidateBearerToken(client: AdsApiClient, bearer: string): Promise<string> {
  return client.send(
    { method: 'POST', path: '/oauth2/invalidate_token', base: 'api', family: 'oauth', form: [['access_token', bearer]] },
    (answer) => z.object({ access_token: z.string() }).parse(JSON.parse(answer.body.toString('utf8'))).access_token,
  );
}
