// The sleep of a worker loop that a NOTIFY, a local event or stop() can cut short. A wake-up that arrives while the
// loop is busy is remembered, so the next sleep returns at once instead of missing it.

export interface WakeUp {
  /** Sleeps up to `ms`; returns at once if woken since the last `reset()`. */
  sleep(ms: number): Promise<void>;
  /** Ends the current sleep, or the next one if none is running. */
  wake(): void;
  /** Called at the top of each round: wake-ups before it are consumed by that round. */
  reset(): void;
}

export function createWakeUp(): WakeUp {
  let woken = false;
  let endSleep: (() => void) | undefined;
  return {
    sleep(ms) {
      if (woken) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(done, Math.max(0, ms));
        function done() {
          clearTimeout(timer);
          endSleep = undefined;
          resolve();
        }
        endSleep = done;
      });
    },
    wake() {
      woken = true;
      endSleep?.();
    },
    reset() {
      woken = false;
    },
  };
}
