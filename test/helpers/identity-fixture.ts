// A small identity data set for the tests: three persons, one of them employed in 50 organizations.

export const WIDE = '3000000001';
export const NARROW = '3000000002';
export const LONE = '3000000003';

export function identityFixture() {
  const organizations = Array.from({ length: 50 }, (_, i) => ({
    oid: String(4000000000 + i),
    shortName: `Org ${i}`,
    fullName: `Organization number ${i}`,
    type: i % 2 ? 'LEGAL' : 'AGENCY',
    ogrn: String(1027700000000 + i),
    inn: String(7700000000 + i),
    kpp: '770001001',
    leg: '12300',
    active: i !== 7,
  }));
  return {
    persons: [
      {
        oid: WIDE,
        firstName: 'Pavel',
        lastName: 'Orlov',
        middleName: 'Ivanovich',
        birthDate: '01.01.1980',
        birthPlace: 'Tver',
        gender: 'M',
        trusted: true,
        rfgUOperatorCheck: true,
        citizenship: 'RUS',
        snils: '111-222-333 44',
        inn: '770000000001',
        updatedOn: 1760000000,
        rIdDoc: 9000000001,
        stateFacts: ['EntityRoot'],
      },
      { oid: NARROW, firstName: 'Olga', lastName: 'Lebedeva', gender: 'F', birthDate: '02.02.1992', snils: '222-333-444 55' },
      { oid: LONE, firstName: 'Lev', lastName: 'Tolstov' },
    ],
    organizations,
    groups: [
      { grpId: 'G_ADMINS', name: 'Admins', description: 'Administrators', itSystem: 'ESIA', organizationOid: organizations[0]!.oid },
      { grpId: 'G_SIGN', name: 'Signers', organizationOid: organizations[1]!.oid },
    ],
    memberships: [
      ...organizations.map((o, i) => ({
        personOid: WIDE,
        organizationOid: o.oid,
        position: `Position ${i}`,
        role: i === 0 ? 'chief' : 'employee',
        chief: i === 0,
        admin: i < 3,
        active: true,
        startDate: '2020-01-01',
      })),
      { personOid: NARROW, organizationOid: organizations[0]!.oid, position: 'Clerk' },
    ],
    groupMemberships: [
      { personOid: WIDE, grpId: 'G_ADMINS' },
      { personOid: WIDE, grpId: 'G_SIGN' },
      { personOid: NARROW, grpId: 'G_SIGN' },
    ],
  };
}
