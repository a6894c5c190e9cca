-- CreateEnum
CREATE TYPE "JobStatus" AS ENUM ('ENABLED', 'PAUSED');

-- CreateEnum
CREATE TYPE "JobMisfirePolicy" AS ENUM ('FIRE_ONCE', 'SKIP');

-- CreateEnum
CREATE TYPE "JobInstanceTrigger" AS ENUM ('SCHEDULE', 'MANUAL');

-- CreateEnum
CREATE TYPE "JobInstanceStatus" AS ENUM ('RUNNING', 'SUCCEEDED', 'FAILED', 'SKIPPED');

-- CreateEnum
CREATE TYPE "JobInstanceMisfire" AS ENUM ('FIRED_LATE', 'SKIPPED');

-- CreateTable
CREATE TABLE "Job" (
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "schedule" TEXT NOT NULL,
    "timeZone" TEXT NOT NULL DEFAULT 'UTC',
    "target" JSONB NOT NULL,
    "status" "JobStatus" NOT NULL DEFAULT 'ENABLED',
    "misfirePolicy" "JobMisfirePolicy" NOT NULL DEFAULT 'FIRE_ONCE',
    "retryCount" INTEGER NOT NULL DEFAULT 0,
    "minBackoffMs" INTEGER NOT NULL DEFAULT 5000,
    "maxBackoffMs" INTEGER NOT NULL DEFAULT 3600000,
    "maxDoublings" INTEGER NOT NULL DEFAULT 5,
    "timeoutSeconds" INTEGER NOT NULL DEFAULT 180,
    "lastRunTime" TIMESTAMP(3),
    "nextRunTime" TIMESTAMP(3),
    "createTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updateTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Job_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "JobInstance" (
    "id" TEXT NOT NULL,
    "jobName" TEXT NOT NULL,
    "trigger" "JobInstanceTrigger" NOT NULL,
    "status" "JobInstanceStatus" NOT NULL DEFAULT 'RUNNING',
    "misfire" "JobInstanceMisfire",
    "scheduledTime" TIMESTAMP(3) NOT NULL,
    "occurrence" TIMESTAMP(3),
    "startTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishTime" TIMESTAMP(3),
    "updateTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "result" JSONB,
    "error" TEXT,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),

    CONSTRAINT "JobInstance_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Job_status_nextRunTime_idx" ON "Job"("status", "nextRunTime");

-- CreateIndex
CREATE INDEX "JobInstance_jobName_scheduledTime_idx" ON "JobInstance"("jobName", "scheduledTime");

-- CreateIndex
CREATE INDEX "JobInstance_status_lockedUntil_idx" ON "JobInstance"("status", "lockedUntil");

-- CreateIndex
CREATE INDEX "JobInstance_jobName_updateTime_idx" ON "JobInstance"("jobName", "updateTime");

-- CreateIndex
CREATE UNIQUE INDEX "JobInstance_jobName_occurrence_key" ON "JobInstance"("jobName", "occurrence");

-- AddForeignKey
ALTER TABLE "JobInstance" ADD CONSTRAINT "JobInstance_jobName_fkey" FOREIGN KEY ("jobName") REFERENCES "Job"("name") ON DELETE CASCADE ON UPDATE CASCADE;
