-- AlterTable
ALTER TABLE "Notification" ALTER COLUMN "maxAttempts" SET DEFAULT 8;

-- AlterTable
ALTER TABLE "Task" ALTER COLUMN "maxAttempts" SET DEFAULT 20,
ALTER COLUMN "maxBackoffMs" SET DEFAULT 3600000;

-- CreateTable
CREATE TABLE "RetrySchedule" (
    "systemId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "scheduleMs" INTEGER[],
    "createTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updateTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RetrySchedule_pkey" PRIMARY KEY ("systemId","channel")
);
