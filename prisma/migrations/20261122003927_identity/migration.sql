-- CreateTable
CREATE TABLE "Person" (
    "oid" TEXT NOT NULL,
    "firstName" TEXT NOT NULL,
    "lastName" TEXT NOT NULL,
    "middleName" TEXT,
    "birthDate" TEXT,
    "birthPlace" TEXT,
    "gender" TEXT,
    "trusted" BOOLEAN NOT NULL DEFAULT false,
    "rfgUOperatorCheck" BOOLEAN NOT NULL DEFAULT false,
    "citizenship" TEXT,
    "snils" TEXT,
    "inn" TEXT,
    "updatedOn" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "status" TEXT NOT NULL DEFAULT 'REGISTERED',
    "verifying" BOOLEAN NOT NULL DEFAULT false,
    "rIdDoc" BIGINT,
    "containsUpCfmCode" BOOLEAN NOT NULL DEFAULT false,
    "eTag" TEXT NOT NULL,
    "stateFacts" TEXT[] DEFAULT ARRAY[]::TEXT[],

    CONSTRAINT "Person_pkey" PRIMARY KEY ("oid")
);

-- CreateTable
CREATE TABLE "Organization" (
    "oid" TEXT NOT NULL,
    "shortName" TEXT NOT NULL,
    "fullName" TEXT NOT NULL,
    "type" TEXT NOT NULL DEFAULT 'LEGAL',
    "ogrn" TEXT,
    "inn" TEXT,
    "kpp" TEXT,
    "leg" TEXT,
    "active" BOOLEAN NOT NULL DEFAULT true,

    CONSTRAINT "Organization_pkey" PRIMARY KEY ("oid")
);

-- CreateTable
CREATE TABLE "OrganizationGroup" (
    "grpId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "itSystem" TEXT,
    "organizationOid" TEXT NOT NULL,

    CONSTRAINT "OrganizationGroup_pkey" PRIMARY KEY ("grpId")
);

-- CreateTable
CREATE TABLE "PersonOrganization" (
    "id" SERIAL NOT NULL,
    "personOid" TEXT NOT NULL,
    "organizationOid" TEXT NOT NULL,
    "position" TEXT,
    "role" TEXT,
    "chief" BOOLEAN NOT NULL DEFAULT false,
    "admin" BOOLEAN NOT NULL DEFAULT false,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "email" TEXT,
    "phone" TEXT,
    "startDate" TIMESTAMP(3),
    "endDate" TIMESTAMP(3),

    CONSTRAINT "PersonOrganization_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PersonGroup" (
    "personOid" TEXT NOT NULL,
    "grpId" TEXT NOT NULL,

    CONSTRAINT "PersonGroup_pkey" PRIMARY KEY ("personOid","grpId")
);

-- CreateIndex
CREATE INDEX "OrganizationGroup_organizationOid_idx" ON "OrganizationGroup"("organizationOid");

-- CreateIndex
CREATE INDEX "PersonOrganization_organizationOid_idx" ON "PersonOrganization"("organizationOid");

-- CreateIndex
CREATE UNIQUE INDEX "PersonOrganization_personOid_organizationOid_key" ON "PersonOrganization"("personOid", "organizationOid");

-- CreateIndex
CREATE INDEX "PersonGroup_grpId_idx" ON "PersonGroup"("grpId");

-- AddForeignKey
ALTER TABLE "OrganizationGroup" ADD CONSTRAINT "OrganizationGroup_organizationOid_fkey" FOREIGN KEY ("organizationOid") REFERENCES "Organization"("oid") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PersonOrganization" ADD CONSTRAINT "PersonOrganization_personOid_fkey" FOREIGN KEY ("personOid") REFERENCES "Person"("oid") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PersonOrganization" ADD CONSTRAINT "PersonOrganization_organizationOid_fkey" FOREIGN KEY ("organizationOid") REFERENCES "Organization"("oid") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PersonGroup" ADD CONSTRAINT "PersonGroup_personOid_fkey" FOREIGN KEY ("personOid") REFERENCES "Person"("oid") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PersonGroup" ADD CONSTRAINT "PersonGroup_grpId_fkey" FOREIGN KEY ("grpId") REFERENCES "OrganizationGroup"("grpId") ON DELETE CASCADE ON UPDATE CASCADE;
