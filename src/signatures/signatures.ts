import { randomUUID } from 'node:crypto';
import type { PrismaClient, Prisma, VerificationAudit } from '../generated/prisma/client.js';
import { readPage, type Page, type Window } from '../pagination.js';
import type { CmsVerificationReport } from './verify.js';
import type { CmsVerifierPool } from './pool.js';
import type { TrustStore } from './trust.js';
import type { AuditFilter, VerifyCmsInput } from './signature-rules.js';

// The signature-verification area over Prisma: verify on the pool with the profile's anchors, then keep an
// audit record (who, when, which certificates, outcome; never the signed data). Inputs are validated by the edge.

export type { VerificationAudit };

export interface SignatureDeps {
  db: PrismaClient;
  trust: TrustStore;
  verifier: CmsVerifierPool;
}

export interface Verification {
  report: CmsVerificationReport;
  audit: VerificationAudit;
}

/** What the audit keeps of each signer: identity of the certificate and outcome, nothing signed. */
function auditedCertificates(report: CmsVerificationReport): Prisma.InputJsonValue {
  return report.signers.map((s) => ({
    index: s.index,
    subject: s.subject?.rdn ?? null,
    issuer: s.issuer?.rdn ?? null,
    serialNumber: s.serialNumber,
    status: s.status,
  }));
}

export async function verifyAndRecord(deps: SignatureDeps, input: VerifyCmsInput): Promise<Verification> {
  const started = performance.now();
  const trust = await deps.trust.rootsFor(input.profile);
  const report = await deps.verifier.verify(
    {
      cmsBase64: input.cmsBase64,
      ...(input.dataBase64 !== undefined && { dataBase64: input.dataBase64 }),
      ...(input.checkTime !== undefined && { checkTime: input.checkTime }),
      ...(input.digestParameter !== undefined && { digestParameter: input.digestParameter }),
      ...(input.needSignedData !== undefined && { needSignedData: input.needSignedData }),
    },
    trust,
  );
  const audit: VerificationAudit = {
    id: randomUUID(),
    createdAt: new Date(),
    profile: input.profile,
    userId: input.audit?.userId ?? null,
    systemId: input.audit?.systemId ?? null,
    clientIp: input.audit?.clientIp ?? null,
    requestId: input.audit?.requestId ?? null,
    alias: input.alias ?? null,
    businessProduct: input.businessProduct ?? null,
    status: report.status,
    valid: report.valid,
    message: report.message.slice(0, 2000),
    certificates: auditedCertificates(report) as Prisma.JsonValue,
    checkTime: input.checkTime ?? null,
    durationMs: Math.round(performance.now() - started),
  };
  await auditWriter(deps.db).write(audit);
  return { report, audit };
}

/**
 * Group commit of audit rows: rows that arrive while a write is in flight go out together in the next
 * createMany, and each caller's promise settles when its own row is stored (so an answer never precedes its
 * audit row). One writer per client.
 */
class AuditWriter {
  private pending: { row: VerificationAudit; done: (error?: unknown) => void }[] = [];
  private writing = false;

  constructor(private readonly db: PrismaClient) {}

  write(row: VerificationAudit): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ row, done: (error) => (error === undefined ? resolve() : reject(error as Error)) });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.pending.length) {
      const batch = this.pending.splice(0, 500);
      try {
        await this.db.verificationAudit.createMany({
          data: batch.map(({ row }) => ({ ...row, certificates: row.certificates as Prisma.InputJsonValue })),
        });
        for (const b of batch) b.done();
      } catch (error) {
        for (const b of batch) b.done(error ?? new Error('audit write failed'));
      }
    }
    this.writing = false;
  }
}

const writers = new WeakMap<PrismaClient, AuditWriter>();

function auditWriter(db: PrismaClient): AuditWriter {
  let writer = writers.get(db);
  if (!writer) writers.set(db, (writer = new AuditWriter(db)));
  return writer;
}

export async function findVerificationAudits(db: PrismaClient, filter: AuditFilter, window: Window): Promise<Page<VerificationAudit>> {
  const where: Prisma.VerificationAuditWhereInput = {
    ...(filter.userId !== undefined && { userId: filter.userId }),
    ...(filter.systemId !== undefined && { systemId: filter.systemId }),
    ...(filter.requestId !== undefined && { requestId: filter.requestId }),
    ...(filter.status !== undefined && { status: filter.status }),
    ...(filter.valid !== undefined && { valid: filter.valid }),
    ...(filter.profile !== undefined && { profile: filter.profile }),
    ...((filter.from !== undefined || filter.to !== undefined) && {
      createdAt: { ...(filter.from && { gte: filter.from }), ...(filter.to && { lt: filter.to }) },
    }),
  };
  return readPage(
    window,
    (skip, take) => db.verificationAudit.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], skip, take }),
    () => db.verificationAudit.count({ where }),
  );
}
