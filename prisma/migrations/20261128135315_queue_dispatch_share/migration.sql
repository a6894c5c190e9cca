-- AlterTable
ALTER TABLE "Queue" ADD COLUMN     "maxConcurrentDispatches" INTEGER;
