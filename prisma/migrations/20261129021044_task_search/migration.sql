-- Substring search over task names and errors: trigram indexes. PostgreSQL ships pg_trgm, and the embedded database
-- loads it when it opens (src/db/pglite-extensions.ts).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- CreateIndex
CREATE INDEX "Task_status_finishTime_idx" ON "Task"("status", "finishTime");

-- CreateIndex
CREATE INDEX "Task_name_trgm_idx" ON "Task" USING GIN ("name" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "Task_lastError_trgm_idx" ON "Task" USING GIN ("lastError" gin_trgm_ops);
