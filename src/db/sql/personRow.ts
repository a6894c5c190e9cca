import { Prisma, type Organization, type Person, type PersonOrganization, type PrismaClient } from '../../generated/prisma/client.js';
import { statementsOf } from '../statements.js';
import { coalescedRead } from '../coalesced-reads.js';

/**
 * One person's row by oid, or null (the record alone: relations are Prisma's). Reads arriving together share a
 * statement (src/db/coalesced-reads.ts).
 */
export const personByOid = byOid((db, oids) => statementsOf(db).rows<Person>(Prisma.sql`SELECT * FROM "Person" WHERE "oid" = ANY(${oids}::text[])`));

/** Reads of persons by oid that arrive together, answered by one statement of `rows`. */
function byOid<P extends Person>(rows: (db: PrismaClient, oids: string[]) => Promise<P[]>) {
  return coalescedRead<PrismaClient, string, P>({ rows, keyOf: (person) => person.oid });
}

export type MembershipRow = PersonOrganization & { organization?: Organization };

/**
 * A person's row with their employments in organization order, each with its organization when `withOrganization`:
 * what Prisma's findFirst returns for `include: { memberships: { orderBy: { organizationOid: 'asc' }, include:
 * { organization: true } } }`, as two plain-row statements for every person read in the same turn. Plain rows, not
 * one statement that builds the memberships as JSON: json_build_object cost PostgreSQL about 1.6x the CPU of both
 * statements together (pgbench, docs/performance.md), and the rows need no conversion afterwards.
 */
export function personWithMemberships(db: PrismaClient, oid: string, withOrganization: boolean): Promise<PersonWithMemberships | null> {
  return (withOrganization ? withOrganizations : alone)(db, oid);
}

type PersonWithMemberships = Person & { memberships: MembershipRow[] };

// Made once: the column lists come from Prisma's generated model, which does not change while the process runs.
const ORGANIZATION_COLUMNS = Object.values(Prisma.OrganizationScalarFieldEnum);
/** An organization's columns beside a membership's, each under a name of its own (`o.active` beside `m.active`). */
const organizationAs = (column: string) => `o.${column}`;
const ORGANIZATION_SELECT = Prisma.raw(ORGANIZATION_COLUMNS.map((column) => `o."${column}" AS "${organizationAs(column)}"`).join(', '));

/** The persons of `oids` with their memberships (and each membership's organization when `withOrganization`). */
async function personsWithMemberships(db: PrismaClient, oids: string[], withOrganization: boolean): Promise<PersonWithMemberships[]> {
  const statements = statementsOf(db);
  const persons = await statements.rows<PersonWithMemberships>(Prisma.sql`SELECT * FROM "Person" WHERE "oid" = ANY(${oids}::text[])`);
  if (persons.length === 0) return persons;
  const found = persons.map((person) => person.oid);
  const rows = await statements.rows<Record<string, unknown>>(
    withOrganization
      ? Prisma.sql`SELECT m.*, ${ORGANIZATION_SELECT} FROM "PersonOrganization" m JOIN "Organization" o ON o."oid" = m."organizationOid"
          WHERE m."personOid" = ANY(${found}::text[]) ORDER BY m."organizationOid"`
      : Prisma.sql`SELECT * FROM "PersonOrganization" WHERE "personOid" = ANY(${found}::text[]) ORDER BY "organizationOid"`,
  );
  const byOid = new Map<string, MembershipRow[]>();
  for (const person of persons) {
    person.memberships = [];
    byOid.set(person.oid, person.memberships);
  }
  for (const row of rows) {
    byOid.get(row.personOid as string)!.push(withOrganization ? membershipWithOrganization(row) : (row as MembershipRow));
  }
  return persons;
}

const MEMBERSHIP_COLUMNS = Object.values(Prisma.PersonOrganizationScalarFieldEnum);

/** A joined row as Prisma gives it: the membership's columns and its organization under `organization`. */
function membershipWithOrganization(row: Record<string, unknown>): MembershipRow {
  const membership: Record<string, unknown> = {};
  for (const column of MEMBERSHIP_COLUMNS) membership[column] = row[column];
  const organization: Record<string, unknown> = {};
  for (const column of ORGANIZATION_COLUMNS) organization[column] = row[organizationAs(column)];
  membership.organization = organization;
  return membership as MembershipRow;
}

// Reads arriving together share their statements (src/db/coalesced-reads.ts), one kind each.
const alone = byOid((db, oids) => personsWithMemberships(db, oids, false));
const withOrganizations = byOid((db, oids) => personsWithMemberships(db, oids, true));
