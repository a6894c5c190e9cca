// Glossary of the long-running parts of a gateway process.

/** A background worker (task dispatcher, cron scheduler, delivery worker), built on supervised loops. */
export interface Worker {
  readonly name: string;
  start(): void;
  /**
   * Stops claiming at once, lets work in hand finish or hands it back, and resolves by `deadline` (epoch ms) at the
   * latest, so that the process's own hard exit never strands a lease.
   */
  stop(deadline: number): Promise<void>;
  /** Cuts the current sleep short: new work may be there. */
  nudge(): void;
}
