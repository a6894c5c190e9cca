-- CreateEnum
CREATE TYPE "TrustProfile" AS ENUM ('DEFAULT', 'CLOUD', 'TECH');

-- CreateTable
CREATE TABLE "TrustedRoot" (
    "id" UUID NOT NULL,
    "profile" "TrustProfile" NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "notAfter" TIMESTAMP(3) NOT NULL,
    "der" BYTEA NOT NULL,
    "addedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TrustedRoot_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "VerificationAudit" (
    "id" UUID NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "profile" "TrustProfile" NOT NULL,
    "userId" TEXT,
    "systemId" TEXT,
    "clientIp" TEXT,
    "requestId" TEXT,
    "alias" TEXT,
    "businessProduct" TEXT,
    "status" TEXT NOT NULL,
    "valid" BOOLEAN NOT NULL,
    "message" TEXT NOT NULL,
    "certificates" JSONB NOT NULL DEFAULT '[]',
    "checkTime" TIMESTAMP(3),
    "durationMs" INTEGER NOT NULL,

    CONSTRAINT "VerificationAudit_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "TrustedRoot_profile_fingerprint_key" ON "TrustedRoot"("profile", "fingerprint");

-- CreateIndex
CREATE INDEX "VerificationAudit_createdAt_idx" ON "VerificationAudit"("createdAt");

-- CreateIndex
CREATE INDEX "VerificationAudit_status_createdAt_idx" ON "VerificationAudit"("status", "createdAt");

-- CreateIndex
CREATE INDEX "VerificationAudit_userId_createdAt_idx" ON "VerificationAudit"("userId", "createdAt");
