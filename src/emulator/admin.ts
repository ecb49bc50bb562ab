/**
 * The admin endpoints under /_emulator/: unsigned, JSON in and out, outside the emulated API
 * (not counted, not rate limited, not faulted).
 * - GET  /_emulator/state[?summary=1]      records, audience members, request counters
 * - GET  /_emulator/faults                 the faults still armed
 * - POST /_emulator/faults                 arm a fault (see faults.ts)
 * - DELETE /_emulator/faults               disarm all
 * - POST /_emulator/custom_audiences       {account_id, name} -> a new custom audience
 * - POST /_emulator/reset                  back to the seeded state
 * - GET  /_emulator/pin?oauth_token=...    approve a request token, answer {pin}
 */
import { invalidParameter, notFound } from './errors.js';
import type { FaultTable } from './faults.js';
import { isPlainObject } from './json-body.js';
import { requireAccount } from './record-lookup.js';
import type { RequestCounters } from './request-counters.js';
import type { RouteDefinition } from './routing.js';
import { stateSnapshot, stateSummary } from './state-snapshot.js';
import type { EmulatorStore } from './store.js';
import type { TokenRegistry } from './token-registry.js';

export interface AdminContext {
  store: EmulatorStore;
  tokens: TokenRegistry;
  faults: FaultTable;
  counters: RequestCounters;
  /** Restores the seeded state of everything. */
  reset(): void;
}

function jsonOf(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw invalidParameter('body', 'the body is not valid JSON');
  }
}

export function adminRoutes(ctx: AdminContext): RouteDefinition[] {
  const json = (status: number, body: unknown) => ({ status, json: body });
  return [
    {
      method: 'GET',
      pattern: '/_emulator/state',
      auth: 'none',
      handle(req) {
        const summary = req.params.get('summary');
        const counts = ctx.counters.snapshot();
        return json(200, summary === '1' || summary === 'true' ? stateSummary(ctx.store, counts) : stateSnapshot(ctx.store, counts));
      },
    },
    { method: 'GET', pattern: '/_emulator/faults', auth: 'none', handle: () => json(200, { faults: ctx.faults.list() }) },
    {
      method: 'POST',
      pattern: '/_emulator/faults',
      auth: 'none',
      handle: (req) => json(200, { fault: ctx.faults.add(jsonOf(req.body)) }),
    },
    {
      method: 'DELETE',
      pattern: '/_emulator/faults',
      auth: 'none',
      handle() {
        ctx.faults.clear();
        return json(200, { faults: [] });
      },
    },
    {
      method: 'POST',
      pattern: '/_emulator/custom_audiences',
      auth: 'none',
      handle(req) {
        const body = jsonOf(req.body);
        if (!isPlainObject(body)) throw invalidParameter('body', 'send {"account_id": "...", "name": "..."}');
        const { account_id: accountId, name } = body;
        if (typeof accountId !== 'string') throw invalidParameter('account_id', 'account_id must be a string');
        if (typeof name !== 'string' || name === '') throw invalidParameter('name', 'name must be a non-empty string');
        const account = requireAccount(ctx.store, accountId);
        const audience = ctx.store.createCustomAudience(account.id, name);
        return json(200, { id: audience.id, account_id: audience.accountId, name: audience.name });
      },
    },
    {
      method: 'POST',
      pattern: '/_emulator/reset',
      auth: 'none',
      handle() {
        ctx.reset();
        return json(200, { reset: true });
      },
    },
    {
      method: 'GET',
      pattern: '/_emulator/pin',
      auth: 'none',
      handle(req) {
        const token = req.params.get('oauth_token') ?? '';
        const record = ctx.tokens.requestToken(token);
        if (!record || record.exchanged) throw notFound(`request token ${token} is unknown or already exchanged`);
        return json(200, { pin: ctx.tokens.approve(record) });
      },
    },
  ];
}
