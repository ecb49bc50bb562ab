/** The parts of one running emulator, wired together: records, credentials, limits, faults, routes. */
import { adminRoutes } from './admin.js';
import { FaultTable } from './faults.js';
import { NonceCache } from './nonce-cache.js';
import { oauthRoutes } from './oauth-endpoints.js';
import type { OAuthVerifierDeps } from './oauth-verify.js';
import type { EmulatorSettings } from './options.js';
import { RateLimitTable, resolveRateLimits, type EmulatorFamily, type FamilyLimit } from './rate-limits.js';
import { RequestCounters } from './request-counters.js';
import type { RouteContext } from './route-context.js';
import { accountRoutes } from './routes/accounts.js';
import { catalogRoutes } from './routes/catalogs.js';
import { customAudienceRoutes } from './routes/custom-audiences.js';
import { doNotReachListRoutes } from './routes/do-not-reach-lists.js';
import { permissionRoutes } from './routes/permissions.js';
import { productSetRoutes } from './routes/product-sets.js';
import { productRoutes } from './routes/products.js';
import { Router } from './routing.js';
import { EmulatorStore } from './store.js';
import { TokenRegistry } from './token-registry.js';

export interface EmulatorRuntime {
  settings: EmulatorSettings;
  store: EmulatorStore;
  tokens: TokenRegistry;
  limits: Partial<Record<EmulatorFamily, FamilyLimit>>;
  rateLimits: RateLimitTable;
  faults: FaultTable;
  counters: RequestCounters;
  verifier: OAuthVerifierDeps;
  apiRouter: Router;
  adminRouter: Router;
  /** Back to the seeded state: records, tokens, nonces, rate-limit windows, faults, counters. */
  reset(): void;
}

export function createEmulatorRuntime(settings: EmulatorSettings): EmulatorRuntime {
  const store = new EmulatorStore(settings.ids, settings.now);
  const tokens = new TokenRegistry(settings.credentials, settings.user);
  const nonces = new NonceCache(2 * settings.timestampSkewSeconds * 1000, settings.now);
  const limits = resolveRateLimits(settings.rateLimits);
  const rateLimits = new RateLimitTable(limits, settings.now);
  const faults = new FaultTable();
  const counters = new RequestCounters();
  const reset = (): void => {
    store.reset();
    tokens.reset();
    nonces.clear();
    rateLimits.clear();
    faults.clear();
    counters.clear();
  };
  const routeContext: RouteContext = { store, tokens };
  const apiRouter = new Router([
    ...accountRoutes(routeContext),
    ...catalogRoutes(routeContext),
    ...productRoutes(routeContext),
    ...productSetRoutes(routeContext),
    ...customAudienceRoutes(routeContext),
    ...doNotReachListRoutes(routeContext),
    ...permissionRoutes(routeContext),
    ...oauthRoutes(routeContext),
  ]);
  const adminRouter = new Router(adminRoutes({ store, tokens, faults, counters, reset }));
  return {
    settings,
    store,
    tokens,
    limits,
    rateLimits,
    faults,
    counters,
    verifier: { tokens, nonces, now: settings.now, timestampSkewSeconds: settings.timestampSkewSeconds },
    apiRouter,
    adminRouter,
    reset,
  };
}
