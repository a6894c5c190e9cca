import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrations.js';
import { Prisma } from '../src/generated/prisma/client.js';
import { statementsOf } from '../src/db/statements.js';
import { personByOid, personWithMemberships } from '../src/db/sql/personRow.js';
import { queueByName } from '../src/db/sql/queueRow.js';
import { DATABASES, freshDatabase, type FreshDatabase } from './helpers/databases.js';

// The gateway's own statements read the same rows whether they run on PostgreSQL's pool directly or through Prisma.

describe.each(DATABASES)('statements (%s)', (kind) => {
  let fresh: FreshDatabase;
  let database: Database;
  beforeAll(async () => {
    fresh = await freshDatabase(kind);
    database = await openDatabase(fresh.url ? { databaseUrl: fresh.url, dataDir: 'unused' } : { dataDir: fresh.env.DATA_DIR! });
    if (fresh.url) await applyMigrations(database.adapterFactory);
    await database.prisma.queue.create({ data: { name: 'q', description: 'd', labels: ['a', 'b'], rate: 3, createTime: new Date('2026-01-02T03:04:05.678Z') } });
  });
  afterAll(async () => {
    await database?.close();
    await fresh?.drop();
  });

  const statement = Prisma.sql`SELECT "name", "description", "status"::text AS "status", "paused", "rate", "labels", "createTime", "updateTime", count(*) OVER ()::int AS "n" FROM "Queue" WHERE "name" = ${'q'}`;

  it('reads what Prisma reads, timestamps as UTC whatever the process time zone', async () => {
    const zone = process.env.TZ;
    process.env.TZ = 'Asia/Vladivostok';
    try {
      const rows = await statementsOf(database.prisma).rows<Record<string, unknown>>(statement);
      expect(rows).toEqual(await database.prisma.$queryRawUnsafe(statement.text, ...statement.values));
      expect(rows).toEqual([
        expect.objectContaining({ name: 'q', description: 'd', status: 'OPEN', paused: false, rate: 3, labels: ['a', 'b'], createTime: new Date('2026-01-02T03:04:05.678Z'), n: 1 }),
      ]);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('a person row reads as Prisma reads it: bigint as BigInt, timestamps as UTC, lists as arrays', async () => {
    await database.prisma.person.create({
      data: { oid: '100', firstName: 'A', lastName: 'B', eTag: 'e', rIdDoc: 9_007_199_254_740_993n, stateFacts: ['EntityRoot'], updatedOn: new Date('2026-03-04T05:06:07.089Z') },
    });
    const zone = process.env.TZ;
    process.env.TZ = 'America/St_Johns';
    try {
      const row = await personByOid(database.prisma, '100');
      expect(row).toEqual(await database.prisma.person.findUnique({ where: { oid: '100' } }));
      expect(row?.rIdDoc).toBe(9_007_199_254_740_993n);
      expect(await personByOid(database.prisma, '101')).toBeNull();
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('a person with their memberships (and organizations) reads as Prisma\'s findFirst with that include reads it', async () => {
    const org = (oid: string) => ({ oid, shortName: `S${oid}`, fullName: `F${oid}`, type: 'LEGAL', inn: oid === '901' ? null : '7707083893' });
    await database.prisma.organization.createMany({ data: [org('902'), org('901'), org('903')] });
    await database.prisma.person.createMany({
      data: ['200', '201'].map((oid) => ({ oid, firstName: 'A', lastName: 'B', eTag: 'e', stateFacts: [], updatedOn: new Date('2026-03-04T05:06:07.089Z') })),
    });
    await database.prisma.personOrganization.createMany({
      data: [
        { personOid: '200', organizationOid: '903', position: 'P "quoted"', chief: true, startDate: new Date('2020-01-02T03:04:05.006Z'), endDate: null },
        { personOid: '200', organizationOid: '901', role: 'employee', admin: true, startDate: null, endDate: new Date('1999-12-31T23:59:59.999Z'), email: 'a@b.c' },
        { personOid: '200', organizationOid: '902', active: false, startDate: new Date('2026-06-30T00:00:00.000Z') },
      ],
    });
    const zone = process.env.TZ;
    process.env.TZ = 'Pacific/Chatham';
    try {
      for (const withOrganization of [true, false]) {
        const include = { memberships: { orderBy: { organizationOid: 'asc' as const }, ...(withOrganization && { include: { organization: true } }) } };
        for (const oid of ['200', '201', '299']) {
          expect(await personWithMemberships(database.prisma, oid, withOrganization)).toEqual(await database.prisma.person.findFirst({ where: { oid }, include }));
        }
      }
      const read = await personWithMemberships(database.prisma, '200', true);
      expect(read!.memberships.map((m) => m.organizationOid)).toEqual(['901', '902', '903']);
      expect(read!.memberships[0]!.endDate).toEqual(new Date('1999-12-31T23:59:59.999Z'));
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('reads asked together (one statement) answer each key as a read alone does, whatever the key holds', async () => {
    const names = ['NULL', 'a,b', 'x"y', 'back\\slash', '{braces}', "it's", 'ünï ∂'];
    for (const name of names) await database.prisma.queue.create({ data: { name, description: name } });
    const asked = [...names, 'q', 'nobody', 'NULL', 'q'];
    const together = await Promise.all(asked.map((name) => queueByName(database.prisma, name)));
    const alone = [];
    for (const name of asked) alone.push(await queueByName(database.prisma, name));
    expect(together).toEqual(alone);
    expect(together.map((queue) => queue?.name ?? null)).toEqual([...names, 'q', null, 'NULL', 'q']);
    expect(together[names.length + 2]).not.toBe(together[0]);

    const oids = ['200', '100', '299', '201', '200'];
    const persons = await Promise.all(oids.map((oid) => personByOid(database.prisma, oid)));
    expect(persons).toEqual(await Promise.all(oids.map((oid) => database.prisma.person.findUnique({ where: { oid } }))));
    for (const withOrganization of [true, false]) {
      const include = { memberships: { orderBy: { organizationOid: 'asc' as const }, ...(withOrganization && { include: { organization: true } }) } };
      const read = await Promise.all(oids.map((oid) => personWithMemberships(database.prisma, oid, withOrganization)));
      expect(read).toEqual(await Promise.all(oids.map((oid) => database.prisma.person.findFirst({ where: { oid }, include }))));
      expect(read[4]!.memberships[0]).not.toBe(read[0]!.memberships[0]);
    }
  });

  it('inside a Prisma transaction a statement runs in that transaction', async () => {
    await expect(
      database.prisma.$transaction(async (tx) => {
        await tx.queue.update({ where: { name: 'q' }, data: { rate: 9 } });
        const [row] = await statementsOf(tx).rows<{ rate: number }>(statement);
        expect(row!.rate).toBe(9);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const [row] = await statementsOf(database.prisma).rows<{ rate: number }>(statement);
    expect(row!.rate).toBe(3);
  });
});
