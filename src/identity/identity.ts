import { createHash } from 'node:crypto';
import type { Person, Prisma, PrismaClient } from '../generated/prisma/client.js';
import { NotFoundError } from '../errors.js';
import { personByOid, personWithMemberships } from '../db/sql/personRow.js';

// The identity area over Prisma: read-only lookups of persons and organizations, and the person record of spec 2.3.

/** The person record of spec 2.3, both spellings of eTag and rIdDoc included. */
export interface PersonView {
  stateFacts: string[];
  firstName: string;
  lastName: string;
  middleName: string | null;
  birthDate: string | null;
  birthPlace: string | null;
  gender: string | null;
  trusted: boolean;
  rfgUOperatorCheck: boolean;
  citizenship: string | null;
  snils: string | null;
  inn: string | null;
  /** Seconds since 1970, as ESIA writes updatedOn. */
  updatedOn: number;
  status: string;
  verifying: boolean;
  rIdDoc: number | null;
  containsUpCfmCode: boolean;
  eTag: string;
  links: string[];
  ridDoc: number | null;
  etag: string;
}

/** Links of a person record: the legacy paths of its organization lists. */
export function personLinks(oid: string): string[] {
  const q = `?oid=${encodeURIComponent(oid)}`;
  return [`/api/data/getPersonOrganizationsById${q}`, `/api/data/orgs/getPersonGroupsOrganizationsById${q}`, `/api/data/orgs/getPersonEmplOrganizationsById${q}`];
}

export function personView(p: Person): PersonView {
  const rIdDoc = p.rIdDoc === null ? null : Number(p.rIdDoc);
  return {
    stateFacts: p.stateFacts,
    firstName: p.firstName,
    lastName: p.lastName,
    middleName: p.middleName,
    birthDate: p.birthDate,
    birthPlace: p.birthPlace,
    gender: p.gender,
    trusted: p.trusted,
    rfgUOperatorCheck: p.rfgUOperatorCheck,
    citizenship: p.citizenship,
    snils: p.snils,
    inn: p.inn,
    updatedOn: Math.floor(p.updatedOn.getTime() / 1000),
    status: p.status,
    verifying: p.verifying,
    rIdDoc,
    containsUpCfmCode: p.containsUpCfmCode,
    eTag: p.eTag,
    links: personLinks(p.oid),
    ridDoc: rIdDoc,
    etag: p.eTag,
  };
}

/** Content fields of a person that its eTag covers. */
export type PersonContent = Omit<Person, 'eTag' | 'updatedOn'>;

/** A person's eTag: a hash of its content, so it changes exactly when the content does. */
export function personETag(content: PersonContent): string {
  const canonical = JSON.stringify(Object.entries(content).sort(([a], [b]) => a.localeCompare(b)), (_k, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v,
  );
  return createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}

/**
 * The eTag of a person as a caller receives it: a hash of the fields released to it, and nothing else (not the stored
 * eTag, which covers every field). Unrestricted callers get the stored one, which covers the same content.
 */
export function viewETag(view: Partial<PersonView>): string {
  const released = Object.entries(view)
    .filter(([k]) => k !== 'eTag' && k !== 'etag')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update('view\0').update(JSON.stringify(released)).digest('hex').slice(0, 32);
}

/** True when an If-None-Match header names this eTag (or is `*`). */
export function matchesETag(ifNoneMatch: string | undefined, eTag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim().replace(/^W\//, '');
    return t === '*' || t === `"${eTag}"` || t === eTag;
  });
}

// findFirst, not findUnique: findUnique goes through Prisma's batching loader, which measured ~2x slower per lookup here.
// The record alone, and the record with its organizations (the nested read of the legacy getPersonOrganizationsById
// and of `person { organizations }`), are the gateway's own statements (src/db/sql/personRow.ts): through the Prisma
// client they cost the gateway about as much CPU again as the rest of the request. Any other query is Prisma's.
export async function getPerson<Q extends Omit<Prisma.PersonFindFirstArgs, 'where'>>(db: PrismaClient, oid: string, query: Q) {
  const memberships = loadsRowOnly(query) ? 'none' : membershipsAsked(query);
  const person =
    memberships === 'none'
      ? await personByOid(db, oid)
      : memberships
        ? await personWithMemberships(db, oid, memberships === 'with organization')
        : await db.person.findFirst({ ...query, where: { oid } });
  if (!person) throw new NotFoundError(`person "${oid}" not found`);
  return person as Prisma.PersonGetPayload<Q>;
}

/** A query that asks for the record alone: no relation, no narrowed selection. */
function loadsRowOnly(query: { include?: unknown; select?: unknown }): boolean {
  return query.select == null && (query.include == null || Object.keys(query.include).length === 0);
}

/**
 * Whether a query asks for exactly the record and its memberships in organization order, each with or without its
 * organization; null for any other query.
 */
function membershipsAsked(query: { include?: unknown; select?: unknown }): 'with organization' | 'alone' | null {
  if (query.select != null || !isRecord(query.include) || !onlyKeys(query.include, ['memberships'])) return null;
  const memberships = query.include.memberships;
  if (!isRecord(memberships) || !onlyKeys(memberships, ['orderBy', 'include'])) return null;
  const { orderBy, include } = memberships;
  if (!isRecord(orderBy) || !onlyKeys(orderBy, ['organizationOid']) || orderBy.organizationOid !== 'asc') return null;
  if (include === undefined) return 'alone';
  return isRecord(include) && onlyKeys(include, ['organization']) && include.organization === true ? 'with organization' : null;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const onlyKeys = (value: Record<string, unknown>, keys: string[]) => Object.keys(value).every((key) => keys.includes(key));

export async function getOrganization<Q extends Omit<Prisma.OrganizationFindFirstArgs, 'where'>>(db: PrismaClient, oid: string, query: Q) {
  const organization = await db.organization.findFirst({ ...query, where: { oid } });
  if (!organization) throw new NotFoundError(`organization "${oid}" not found`);
  return organization;
}
