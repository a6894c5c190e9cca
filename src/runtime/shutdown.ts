import type { Gateway } from '../app.js';

/** First SIGTERM/SIGINT drains (stop accepting, finish or hand back work, close the database); a second forces exit. */
export function registerShutdown(gateway: Gateway, graceMs: number): void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
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
      () => process.exit(0),
      (error: unknown) => {
        gateway.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
