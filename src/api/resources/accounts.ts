import { z } from 'zod';
import type { AdsApiClient } from '../client.js';
import { seg } from './path.js';

const accountSchema = z.looseObject({ id: z.string(), name: z.string().optional(), deleted: z.boolean().optional() });
export type AdsAccount = z.infer<typeof accountSchema>;

export async function getAccount(client: AdsApiClient, accountId: string): Promise<AdsAccount> {
  const env = await client.call({ method: 'GET', path: `/12/accounts/${seg(accountId)}`, family: 'accounts' }, (d) => accountSchema.parse(d));
  return env.data;
}

export async function* listAccounts(client: AdsApiClient): AsyncGenerator<AdsAccount[]> {
  yield* client.paginate({ method: 'GET', path: '/12/accounts', family: 'accounts' }, (d) => z.array(accountSchema).parse(d));
}
