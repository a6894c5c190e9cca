import { writeSync } from 'node:fs';
import { pino, type Logger } from 'pino';

export type { Logger };

/** How long an info line may wait to be written with the lines after it. */
export const LOG_FLUSH_MS = 50;
/** Buffered bytes that are written at once, whatever the time. */
const FLUSH_BYTES = 16 * 1024;
/** pino's level number of `warn`: such lines, and everything before them, are written at once. */
const WARN = 40;
/** pino's metadata protocol: a stream carrying it gets lastLevel set before each write. */
const METADATA: unique symbol = Symbol.for('pino.metadata') as never;

/**
 * Where log lines go: stdout, written synchronously from the main thread (pino's default hands every line to libuv's
 * thread pool and back, two thread wake-ups per line). Lines below warn (the access line of every request, mostly) are
 * gathered and written together, within LOG_FLUSH_MS or at FLUSH_BYTES: one write per request was a syscall that also
 * woke the reader of the pipe, a measurable part of a request's CPU. A warning or an error is written at once, with
 * every line before it, in order; what is buffered is written when the process exits (not after SIGKILL: at most
 * LOG_FLUSH_MS of info lines are lost then).
 */
export class LineDestination {
  readonly [METADATA] = true;
  lastLevel = 0;
  private buffer = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fd: number,
    private readonly flushMs = LOG_FLUSH_MS,
  ) {
    process.once('exit', () => this.flush());
  }

  write(line: string): void {
    this.buffer += line;
    if (this.lastLevel >= WARN || this.buffer.length >= FLUSH_BYTES) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushMs).unref();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.buffer) return;
    const bytes = Buffer.from(this.buffer);
    this.buffer = '';
    for (let offset = 0; offset < bytes.length; ) {
      try {
        offset += writeSync(this.fd, bytes, offset);
      } catch (error) {
        // A full non-blocking pipe: try again (a reader that went away: stop, as pino does on EPIPE).
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      }
    }
  }
}

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'gateway' }, timestamp: pino.stdTimeFunctions.isoTime }, new LineDestination(1));
}
