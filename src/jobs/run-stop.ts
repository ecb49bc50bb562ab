/**
 * The stop signal of one run: the process's stop request (SIGTERM, Ctrl-C), which outlives every
 * run (a scheduler's lasts for months), or the loss of one of the run's own locks.
 *
 * Not `AbortSignal.any` over the process's signal: on Node 20 each signal it makes stays
 * referenced from its sources until they abort (~50 bytes per call, measured), so a scheduler
 * kept one more for every run it ever made. The run follows the process's request through a
 * listener it removes when it ends; `AbortSignal.any` joins only signals that die with the run.
 */
export class RunStop {
  /** Aborted when the process is asked to stop or one of the run's own signals aborts. */
  readonly signal: AbortSignal;
  private readonly requested = new AbortController();
  private readonly follow = (): void => this.requested.abort(this.processStop.reason);

  constructor(
    private readonly processStop: AbortSignal,
    own: readonly AbortSignal[],
  ) {
    if (processStop.aborted) this.follow();
    else processStop.addEventListener('abort', this.follow, { once: true });
    this.signal = AbortSignal.any([this.requested.signal, ...own]);
  }

  /** The run has ended: it no longer follows the process's stop request. */
  end(): void {
    this.processStop.removeEventListener('abort', this.follow);
  }
}
