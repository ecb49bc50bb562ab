/** What route handlers share: the records and the credentials (the clock comes with each request). */
import type { EmulatorStore } from './store.js';
import type { TokenRegistry } from './token-registry.js';

export interface RouteContext {
  store: EmulatorStore;
  tokens: TokenRegistry;
}
