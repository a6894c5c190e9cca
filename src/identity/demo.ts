import type { PrismaClient } from '../generated/prisma/client.js';
import type { ImportFile } from './identity-rules.js';
import { importIdentity } from './import.js';

// A small demo data set for the embedded database, so that GraphiQL has something to show on a fresh machine.

export const DEMO_DATA: ImportFile = {
  persons: [
    {
      oid: '1000000001',
      firstName: 'Ivan',
      lastName: 'Petrov',
      middleName: 'Sergeevich',
      birthDate: '14.02.1985',
      birthPlace: 'Moscow',
      gender: 'M',
      trusted: true,
      citizenship: 'RUS',
      snils: '112-233-445 95',
      inn: '500100732259',
      rIdDoc: 3520011,
      updatedOn: 1767225600,
      stateFacts: ['EntityRoot'],
    },
    {
      oid: '1000000002',
      firstName: 'Anna',
      lastName: 'Smirnova',
      birthDate: '03.09.1990',
      birthPlace: 'Kazan',
      gender: 'F',
      trusted: true,
      citizenship: 'RUS',
      snils: '123-456-789 64',
      updatedOn: 1767225600,
      stateFacts: ['EntityRoot'],
    },
  ],
  organizations: [
    { oid: '2000000001', shortName: 'Minfin', fullName: 'Ministry of Finance', type: 'AGENCY', ogrn: '1037739085636', inn: '7710168360', kpp: '771001001', leg: '75101', active: true },
    { oid: '2000000002', shortName: 'Romashka LLC', fullName: 'Limited Liability Company "Romashka"', type: 'LEGAL', ogrn: '1027700132195', inn: '7707083893', kpp: '773601001', leg: '12300', active: true },
  ],
  groups: [
    { grpId: 'DEMO_ADMINS', name: 'Administrators', description: 'Administrators of the organization profile', itSystem: 'ESIA', organizationOid: '2000000001' },
    { grpId: 'DEMO_SIGNERS', name: 'Signers', description: 'May sign documents for the organization', itSystem: 'EDO', organizationOid: '2000000002' },
  ],
  memberships: [
    { personOid: '1000000001', organizationOid: '2000000001', position: 'Head of department', role: 'employee', chief: false, admin: true, active: true, startDate: '2019-03-01' },
    { personOid: '1000000001', organizationOid: '2000000002', position: 'Director', role: 'chief', chief: true, admin: true, active: true, startDate: '2015-06-15' },
    { personOid: '1000000002', organizationOid: '2000000002', position: 'Accountant', role: 'employee', active: true, startDate: '2021-01-11' },
  ],
  groupMemberships: [
    { personOid: '1000000001', grpId: 'DEMO_ADMINS' },
    { personOid: '1000000001', grpId: 'DEMO_SIGNERS' },
    { personOid: '1000000002', grpId: 'DEMO_SIGNERS' },
  ],
};

/** Loads the demo data set when the identity tables are empty; returns whether it did. */
export async function seedDemoData(db: PrismaClient): Promise<boolean> {
  const [persons, organizations] = await Promise.all([db.person.count(), db.organization.count()]);
  if (persons > 0 || organizations > 0) return false;
  await importIdentity(db, DEMO_DATA);
  return true;
}
