-- CreateEnum
CREATE TYPE "QueueStatus" AS ENUM ('OPEN', 'CLOSE');

-- CreateTable
CREATE TABLE "Queue" (
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "status" "QueueStatus" NOT NULL DEFAULT 'OPEN',
    "paused" BOOLEAN NOT NULL DEFAULT false,
    "rate" INTEGER NOT NULL DEFAULT 1,
    "labels" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "createTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updateTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Queue_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "Queue_labels_idx" ON "Queue" USING GIN ("labels");
