import { pino, type Logger } from 'pino';

export type { Logger };

// Lines are written to stdout synchronously, from the main thread: pino's default (asynchronous fs.write) hands every
// line to libuv's thread pool and back, two thread wake-ups per line, and with one access line per request that was
// a measurable part of a request's CPU. A line is also on its way before the next one is made, even if the process
// is then killed.
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'gateway' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: 1, sync: true }));
}
