import { parentPort } from 'node:worker_threads';
import { verifyCms, type CmsVerificationInput, type CmsVerificationReport } from './verify.js';

// One verifier thread of the pool (pool.ts). Trust anchors arrive once per profile version and stay cached,
// so the core's per-array parse cache holds across calls.

export interface VerifyJob {
  id: number;
  input: CmsVerificationInput;
  profile: string;
  version: number;
  /** present when this thread has not seen this profile version yet */
  roots?: Uint8Array[];
}

export type VerifyAnswer = { id: number; report: CmsVerificationReport } | { id: number; error: string };

const anchors = new Map<string, { version: number; roots: Uint8Array[] }>();

parentPort?.on('message', (job: VerifyJob) => {
  if (job.roots) anchors.set(job.profile, { version: job.version, roots: job.roots });
  const known = anchors.get(job.profile);
  if (!known || known.version !== job.version) {
    parentPort!.postMessage({ id: job.id, error: `trust anchors of ${job.profile} v${job.version} were not sent` } satisfies VerifyAnswer);
    return;
  }
  verifyCms(job.input, { trustedRoots: known.roots }).then(
    (report) => parentPort!.postMessage({ id: job.id, report } satisfies VerifyAnswer),
    (error: unknown) => parentPort!.postMessage({ id: job.id, error: String(error) } satisfies VerifyAnswer),
  );
});
