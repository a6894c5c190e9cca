import { Worker } from 'node:worker_threads';

// The net under the disk guard (src/db/disk-guard.ts). PGlite runs on the main thread: if it ever spins in
// WebAssembly on a full disk in a way the guard did not foresee, nothing on that thread runs again (no answer, no
// SIGTERM handler, no timer). A worker thread watches the main thread's heartbeat; when it has stopped for
// `stallMs` while the disk of DATA_DIR is nearly full, it writes one log line and ends the process with SIGKILL
// (the only way out of a thread that never yields), for a supervisor to restart it: the WAL keeps every
// acknowledged write. A stall with space on the disk is left alone: that is not this fault.

export interface StallWatchdog {
  stop(): void;
}

export interface StallWatchdogOptions {
  dir: string;
  /** How long the main thread may be stalled before the process is ended. */
  stallMs: number;
  /** The process is ended only while the disk has less than this free. */
  lowBytes: number;
}

/** Runs in the worker: plain JavaScript (it is not compiled with the sources). */
const WATCHER = `
const { workerData } = require('node:worker_threads');
const { statfsSync, writeSync } = require('node:fs');
const { beat, dir, stallMs, lowBytes } = workerData;
const beats = new Float64Array(beat);
setInterval(() => {
  const stalled = Date.now() - beats[0];
  if (stalled < stallMs) return;
  let free;
  try { const s = statfsSync(dir); free = Number(s.bavail) * Number(s.bsize); } catch { return; }
  if (free >= lowBytes) return;
  const msg = 'the embedded database stopped answering: the main thread has been blocked for ' + Math.round(stalled / 1000) + ' s with ' + (free / 1048576).toFixed(1) + ' MiB free on the disk of DATA_DIR (' + dir + '); ending the process (SIGKILL). Free space on that disk and start the gateway again: it recovers every acknowledged write';
  writeSync(1, JSON.stringify({ level: 60, time: new Date().toISOString(), service: 'gateway', dataDir: dir, freeBytes: free, stalledMs: stalled, msg }) + '\\n');
  process.kill(process.pid, 'SIGKILL');
}, Math.min(500, stallMs / 2));
`;

export function startStallWatchdog(options: StallWatchdogOptions): StallWatchdog {
  const beat = new SharedArrayBuffer(8);
  const beats = new Float64Array(beat);
  beats[0] = Date.now();
  const heartbeat = setInterval(() => (beats[0] = Date.now()), Math.min(250, options.stallMs / 4));
  heartbeat.unref();
  const worker = new Worker(WATCHER, { eval: true, workerData: { beat, ...options } });
  worker.unref();
  worker.on('error', () => undefined);
  return {
    stop() {
      clearInterval(heartbeat);
      void worker.terminate();
    },
  };
}
