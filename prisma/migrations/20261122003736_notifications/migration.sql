-- CreateTable
CREATE TABLE "SystemChannel" (
    "systemId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "createTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updateTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SystemChannel_pkey" PRIMARY KEY ("systemId","channel")
);

-- CreateTable
CREATE TABLE "Notification" (
    "id" UUID NOT NULL,
    "incomingId" UUID NOT NULL,
    "systemId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "externalId" TEXT,
    "recipient" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "reportForm" JSONB,
    "fileGroupId" UUID,
    "status" TEXT NOT NULL,
    "flag" TEXT NOT NULL DEFAULT 'NORMAL',
    "priority" INTEGER NOT NULL DEFAULT 2,
    "sendAfter" TIMESTAMP(3),
    "sendBefore" TIMESTAMP(3),
    "availableAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "maxAttempts" INTEGER NOT NULL DEFAULT 5,
    "lastError" TEXT,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "createTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updateTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredTime" TIMESTAMP(3),

    CONSTRAINT "Notification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "IdempotencyRecord" (
    "systemId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "requestHash" TEXT NOT NULL,
    "response" JSONB NOT NULL,
    "createTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IdempotencyRecord_pkey" PRIMARY KEY ("systemId","key")
);

-- CreateTable
CREATE TABLE "FileGroup" (
    "id" UUID NOT NULL,
    "systemId" TEXT NOT NULL,
    "createTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "FileGroup_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "StoredFile" (
    "id" UUID NOT NULL,
    "groupId" UUID NOT NULL,
    "filename" TEXT NOT NULL,
    "contentType" TEXT NOT NULL DEFAULT 'application/octet-stream',
    "size" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "StoredFile_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Notification_status_priority_availableAt_idx" ON "Notification"("status", "priority", "availableAt");

-- CreateIndex
CREATE INDEX "Notification_incomingId_idx" ON "Notification"("incomingId");

-- CreateIndex
CREATE INDEX "Notification_type_createTime_idx" ON "Notification"("type", "createTime");

-- CreateIndex
CREATE INDEX "Notification_systemId_externalId_idx" ON "Notification"("systemId", "externalId");

-- CreateIndex
CREATE INDEX "StoredFile_groupId_idx" ON "StoredFile"("groupId");

-- AddForeignKey
ALTER TABLE "StoredFile" ADD CONSTRAINT "StoredFile_groupId_fkey" FOREIGN KEY ("groupId") REFERENCES "FileGroup"("id") ON DELETE CASCADE ON UPDATE CASCADE;
