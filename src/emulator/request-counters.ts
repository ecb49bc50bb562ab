/**
 * Counts of the API requests served, per route pattern ("POST /12/.../users") and per status.
 * A request whose connection went away without an answer counts under "dropped" (a drop
 * fault) or "aborted" (the client gave up while sending).
 */
export type CountedStatus = number | 'dropped' | 'aborted';

export interface RequestCounts {
  total: number;
  by_route: Record<string, number>;
  by_status: Record<string, number>;
}

function byKey([a]: [string, number], [b]: [string, number]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class RequestCounters {
  private total = 0;
  private readonly byRoute = new Map<string, number>();
  private readonly byStatus = new Map<string, number>();

  record(routeKey: string, status: CountedStatus): void {
    this.total += 1;
    this.byRoute.set(routeKey, (this.byRoute.get(routeKey) ?? 0) + 1);
    const key = String(status);
    this.byStatus.set(key, (this.byStatus.get(key) ?? 0) + 1);
  }

  snapshot(): RequestCounts {
    return {
      total: this.total,
      by_route: Object.fromEntries([...this.byRoute].sort(byKey)),
      by_status: Object.fromEntries([...this.byStatus].sort(byKey)),
    };
  }

  clear(): void {
    this.total = 0;
    this.byRoute.clear();
    this.byStatus.clear();
  }
}
