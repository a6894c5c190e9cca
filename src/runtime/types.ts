// Glossary of the long-running parts of a gateway process.

/** A background loop (task dispatcher, cron scheduler, delivery worker): claim -> run -> settle -> sleep. */
export interface Worker {
  readonly name: string;
  start(): void;
  /** Finishes or hands back leased work, then resolves; never leaves a lease dangling. */
  stop(): Promise<void>;
  /** Cuts the current sleep short: new work may be there. */
  nudge(): void;
}
