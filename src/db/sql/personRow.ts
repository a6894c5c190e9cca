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
 * { organization: true } } }`, in one statement that PostgreSQL runs in about three quarters of the CPU of Prisma's JSONB
 * one (pgbench, docs/decisions.md), and without the client's result processing.
 */
export function personWithMemberships(db: PrismaClient, oid: string, withOrganization: boolean): Promise<PersonWithMemberships | null> {
  return (withOrganization ? withOrganizations : alone)(db, oid);
}

type PersonWithMemberships = Person & { memberships: MembershipRow[] };

/** The persons of `oids` with their memberships, in one statement. */
async function personsWithMemberships(db: PrismaClient, oids: string[], { memberships, join }: { memberships: Prisma.Sql; join: Prisma.Sql }): Promise<PersonWithMemberships[]> {
  const persons = await statementsOf(db).rows<PersonWithMemberships>(Prisma.sql`
    SELECT p.*, (
      SELECT coalesce(json_agg(${memberships} ORDER BY m."organizationOid"), '[]')
      FROM "PersonOrganization" m ${join} WHERE m."personOid" = p."oid"
    ) AS "memberships"
    FROM "Person" p WHERE p."oid" = ANY(${oids}::text[])`);
  // JSON carries a timestamp without time zone as ISO text without an offset; Prisma reads it as UTC.
  for (const person of persons) {
    for (const membership of person.memberships) {
      membership.startDate = utcDate(membership.startDate as unknown as string | null);
      membership.endDate = utcDate(membership.endDate as unknown as string | null);
    }
  }
  return persons;
}

// Made once: the column lists come from Prisma's generated model, which does not change while the process runs.
const ALONE = { memberships: jsonObject(Prisma.PersonOrganizationScalarFieldEnum, 'm'), join: Prisma.empty };
const WITH_ORGANIZATION = {
  memberships: Prisma.sql`json_build_object(${jsonFields(Prisma.PersonOrganizationScalarFieldEnum, 'm')}, 'organization', ${jsonObject(Prisma.OrganizationScalarFieldEnum, 'o')})`,
  join: Prisma.sql`JOIN "Organization" o ON o."oid" = m."organizationOid"`,
};

// Reads arriving together share a statement (src/db/coalesced-reads.ts), one kind of statement each.
const alone = byOid((db, oids) => personsWithMemberships(db, oids, ALONE));
const withOrganizations = byOid((db, oids) => personsWithMemberships(db, oids, WITH_ORGANIZATION));

const utcDate = (text: string | null) => (text === null ? null : new Date(`${text}Z`));

/** `'name', alias."name", ...` for every scalar column of a model (Prisma's generated list, so a new column follows). */
function jsonFields(columns: Record<string, string>, alias: string): Prisma.Sql {
  return Prisma.raw(Object.values(columns).map((column) => `'${column}', ${alias}."${column}"`).join(', '));
}

function jsonObject(columns: Record<string, string>, alias: string): Prisma.Sql {
  return Prisma.sql`json_build_object(${jsonFields(columns, alias)})`;
}
