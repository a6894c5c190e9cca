-- Rate limit leases: a process takes a share of a key's tokens at once and spends them locally. Tokens out on lease
-- are counted per lease period (the current one and the one before), so the bucket refills only up to its capacity
-- less what is out on lease, as one bucket holding those tokens would.
ALTER TABLE "RateBucket" ADD COLUMN "leasedEpoch" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN "leasedNow" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN "leasedPrev" DOUBLE PRECISION NOT NULL DEFAULT 0;
