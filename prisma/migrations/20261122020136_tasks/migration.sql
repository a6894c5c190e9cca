-- CreateEnum
CREATE TYPE "TaskStatus" AS ENUM ('BLOCKED', 'READY', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED');

-- CreateTable
CREATE TABLE "Task" (
    "id" UUID NOT NULL,
    "queueName" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "status" "TaskStatus" NOT NULL,
    "payload" JSONB,
    "target" JSONB NOT NULL,
    "scheduleTime" TIMESTAMP(3),
    "dependsOn" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "maxAttempts" INTEGER NOT NULL DEFAULT 5,
    "minBackoffMs" INTEGER NOT NULL DEFAULT 1000,
    "maxBackoffMs" INTEGER NOT NULL DEFAULT 300000,
    "lastError" TEXT,
    "result" JSONB,
    "availableAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "createTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startTime" TIMESTAMP(3),
    "finishTime" TIMESTAMP(3),
    "updateTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Task_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Task_queueName_status_availableAt_idx" ON "Task"("queueName", "status", "availableAt");

-- CreateIndex
CREATE INDEX "Task_status_lockedUntil_idx" ON "Task"("status", "lockedUntil");

-- CreateIndex
CREATE INDEX "Task_status_availableAt_idx" ON "Task"("status", "availableAt");

-- CreateIndex
CREATE UNIQUE INDEX "Task_queueName_name_key" ON "Task"("queueName", "name");

-- AddForeignKey
ALTER TABLE "Task" ADD CONSTRAINT "Task_queueName_fkey" FOREIGN KEY ("queueName") REFERENCES "Queue"("name") ON DELETE CASCADE ON UPDATE CASCADE;
