-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "history" JSONB NOT NULL DEFAULT '[]';
