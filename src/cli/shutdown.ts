import type { Gateway } from '../app.js';

/**
 * First SIGTERM/SIGINT drains (stop accepting, finish or hand back work, close the database); a second forces exit.
 * An embedded database that met a full disk and cannot go on drains the same way and exits 1, for a supervisor to
 * start it again (its start-up says when there is still not enough space).
 */
export function registerShutdown(gateway: Gateway, graceMs: number): void {
  let signalled = false;
  let exitCode = 0;
  const onSignal = (signal: NodeJS.Signals | 'database-failed') => {
    if (signalled) {
      if (signal === 'database-failed') return;
      gateway.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    signalled = true;
    gateway.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      gateway.log.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    gateway.close().then(
      () => process.exit(exitCode),
      (error: unknown) => {
        gateway.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  gateway.database.disk?.onFailed(() => {
    exitCode = 1;
    onSignal('database-failed');
  });
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
