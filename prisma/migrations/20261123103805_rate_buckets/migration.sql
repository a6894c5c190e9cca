-- CreateTable
CREATE TABLE "RateBucket" (
    "key" TEXT NOT NULL,
    "tokens" DOUBLE PRECISION NOT NULL,
    "granted" BOOLEAN NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "RateBucket_pkey" PRIMARY KEY ("key")
);

-- Buckets are momentary state, rewritten on every keyed operation: no WAL and no fsync for them. After a crash of
-- the database server the table is empty, which only gives every key a full bucket again.
ALTER TABLE "RateBucket" SET UNLOGGED;
