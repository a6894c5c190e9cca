import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CmsVerificationInput, CmsVerificationReport } from './verify.js';
import type { TrustSet } from './trust.js';
import type { VerifyAnswer, VerifyJob } from './pool-worker.js';
import { codeFile } from '../kit/project-root.js';

// Verification is CPU-bound (parsing, RSA/EC/GOST arithmetic): it runs on worker_threads so the event loop
// stays free and every core is used. A job goes to the thread with the fewest jobs in flight.

interface Thread {
  worker: Worker;
  inFlight: Map<number, { resolve: (r: CmsVerificationReport) => void; reject: (e: Error) => void }>;
  /** profile -> trust version this thread holds */
  versions: Map<string, number>;
}

const WORKER_URL = pathToFileURL(codeFile('signatures/pool-worker.ts'));

/** Loader arguments a thread needs to run TypeScript when this process runs it (tsx, vitest). */
function workerExecArgv(): string[] {
  if (!WORKER_URL.pathname.endsWith('.ts')) return process.execArgv;
  if (process.execArgv.some((a) => a.includes('tsx'))) return process.execArgv;
  const loader = createRequire(import.meta.url).resolve('tsx/package.json').replace(/package\.json$/, 'dist/loader.mjs');
  return ['--import', pathToFileURL(loader).href];
}

export class CmsVerifierPool {
  private readonly threads: Thread[] = [];
  private nextId = 1;
  private closed = false;
  readonly size: number;

  constructor(size: number) {
    this.size = size > 0 ? size : availableParallelism();
  }

  /** Threads started so far (they start on demand, up to `size`). */
  get threadCount(): number {
    return this.threads.length;
  }

  private spawn(): Thread {
    const worker = new Worker(WORKER_URL, { execArgv: workerExecArgv() });
    const thread: Thread = { worker, inFlight: new Map(), versions: new Map() };
    worker.unref();
    worker.on('message', (answer: VerifyAnswer) => {
      const pending = thread.inFlight.get(answer.id);
      if (!pending) return;
      thread.inFlight.delete(answer.id);
      if ('report' in answer) pending.resolve(answer.report);
      else pending.reject(new Error(answer.error));
    });
    const fail = (error: Error) => {
      const at = this.threads.indexOf(thread);
      if (at >= 0) this.threads.splice(at, 1);
      for (const p of thread.inFlight.values()) p.reject(error);
      thread.inFlight.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`verifier thread exited (code ${code})`)));
    this.threads.push(thread);
    return thread;
  }

  private pick(): Thread {
    if (this.threads.length < this.size) {
      const idle = this.threads.find((t) => t.inFlight.size === 0);
      if (!idle) return this.spawn();
    }
    return this.threads.reduce((a, b) => (b.inFlight.size < a.inFlight.size ? b : a));
  }

  verify(input: CmsVerificationInput, trust: TrustSet): Promise<CmsVerificationReport> {
    if (this.closed) return Promise.reject(new Error('the verifier pool is closed'));
    const thread = this.pick();
    const id = this.nextId++;
    const job: VerifyJob = { id, input, profile: trust.profile, version: trust.version };
    if (thread.versions.get(trust.profile) !== trust.version) {
      job.roots = trust.roots;
      thread.versions.set(trust.profile, trust.version);
    }
    return new Promise((resolve, reject) => {
      thread.inFlight.set(id, { resolve, reject });
      thread.worker.ref();
      thread.worker.postMessage(job);
    }).finally(() => {
      if (thread.inFlight.size === 0) thread.worker.unref();
    }) as Promise<CmsVerificationReport>;
  }

  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }
}
