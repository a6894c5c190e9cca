import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import type { PrismaClient } from '../generated/prisma/client.js';
import { ValidationError, type FieldIssue } from '../errors.js';
import { importFile, type ImportFile, type ImportPerson } from './identity-rules.js';
import { personETag, type PersonContent } from './identity.js';

// `npm run import -- file.json`: the whole file is checked first (shape, duplicates, references), then written
// in one transaction as upserts. Importing the same file twice changes nothing the second time.

export interface ImportSummary {
  persons: { created: number; updated: number; unchanged: number };
  organizations: number;
  groups: number;
  memberships: number;
  groupMemberships: number;
}

/** `persons[3].snils` from zod's path. */
function positionOf(path: PropertyKey[]): string {
  return path.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)), '') || '(root)';
}

function issuesOf(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: positionOf([...issue.path, key]), message: 'is not a known field' }))
      : [{ field: positionOf(issue.path), message: issue.message }],
  );
}

export function parseImportFile(raw: unknown): ImportFile {
  const parsed = importFile.safeParse(raw);
  if (!parsed.success) throw new ValidationError(issuesOf(parsed.error));
  return parsed.data;
}

export async function readImportFile(path: string): Promise<ImportFile> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new ValidationError([{ field: '(file)', message: `is not readable JSON: ${(error as Error).message}` }]);
  }
  return parseImportFile(raw);
}

function contentOf(p: ImportPerson): PersonContent {
  return {
    oid: p.oid,
    firstName: p.firstName,
    lastName: p.lastName,
    middleName: p.middleName ?? null,
    birthDate: p.birthDate ?? null,
    birthPlace: p.birthPlace ?? null,
    gender: p.gender ?? null,
    trusted: p.trusted ?? false,
    rfgUOperatorCheck: p.rfgUOperatorCheck ?? false,
    citizenship: p.citizenship ?? null,
    snils: p.snils ?? null,
    inn: p.inn ?? null,
    status: p.status ?? 'REGISTERED',
    verifying: p.verifying ?? false,
    rIdDoc: p.rIdDoc === null || p.rIdDoc === undefined ? null : BigInt(p.rIdDoc),
    containsUpCfmCode: p.containsUpCfmCode ?? false,
    stateFacts: p.stateFacts ?? ['EntityRoot'],
  };
}

/** Duplicates inside the file and references to records neither in the file nor in the database. */
async function checkConsistency(db: PrismaClient, file: ImportFile): Promise<void> {
  const issues: FieldIssue[] = [];
  const dupes = <T>(list: T[], section: string, key: (item: T) => string, field: string) => {
    const seen = new Map<string, number>();
    list.forEach((item, i) => {
      const k = key(item);
      const first = seen.get(k);
      if (first !== undefined) issues.push({ field: `${section}[${i}].${field}`, message: `repeats ${section}[${first}]` });
      else seen.set(k, i);
    });
  };
  dupes(file.persons, 'persons', (p) => p.oid, 'oid');
  dupes(file.organizations, 'organizations', (o) => o.oid, 'oid');
  dupes(file.groups, 'groups', (g) => g.grpId, 'grpId');
  dupes(file.memberships, 'memberships', (m) => `${m.personOid}/${m.organizationOid}`, 'organizationOid');
  dupes(file.groupMemberships, 'groupMemberships', (m) => `${m.personOid}/${m.grpId}`, 'grpId');

  const persons = new Set(file.persons.map((p) => p.oid));
  const orgs = new Set(file.organizations.map((o) => o.oid));
  const groups = new Set(file.groups.map((g) => g.grpId));
  const missing = (known: Set<string>, wanted: string[]) => [...new Set(wanted.filter((w) => !known.has(w)))];
  const personRefs = missing(persons, [...file.memberships, ...file.groupMemberships].map((m) => m.personOid));
  const orgRefs = missing(orgs, [...file.memberships, ...file.groups].map((m) => m.organizationOid));
  const groupRefs = missing(groups, file.groupMemberships.map((m) => m.grpId));
  const [dbPersons, dbOrgs, dbGroups] = await Promise.all([
    personRefs.length ? db.person.findMany({ where: { oid: { in: personRefs } }, select: { oid: true } }) : [],
    orgRefs.length ? db.organization.findMany({ where: { oid: { in: orgRefs } }, select: { oid: true } }) : [],
    groupRefs.length ? db.organizationGroup.findMany({ where: { grpId: { in: groupRefs } }, select: { grpId: true } }) : [],
  ]);
  for (const p of dbPersons) persons.add(p.oid);
  for (const o of dbOrgs) orgs.add(o.oid);
  for (const g of dbGroups) groups.add(g.grpId);
  const ref = (section: string, i: number, field: string, known: Set<string>, value: string, what: string) => {
    if (!known.has(value)) issues.push({ field: `${section}[${i}].${field}`, message: `names unknown ${what} "${value}"` });
  };
  file.groups.forEach((g, i) => ref('groups', i, 'organizationOid', orgs, g.organizationOid, 'organization'));
  file.memberships.forEach((m, i) => {
    ref('memberships', i, 'personOid', persons, m.personOid, 'person');
    ref('memberships', i, 'organizationOid', orgs, m.organizationOid, 'organization');
  });
  file.groupMemberships.forEach((m, i) => {
    ref('groupMemberships', i, 'personOid', persons, m.personOid, 'person');
    ref('groupMemberships', i, 'grpId', groups, m.grpId, 'group');
  });
  if (issues.length) throw new ValidationError(issues);
}

const day = (d: string | null | undefined) => (d ? new Date(`${d}T00:00:00.000Z`) : null);

/** Checks the whole file, then upserts everything in one transaction; a bad record means nothing is written. */
export async function importIdentity(db: PrismaClient, raw: unknown): Promise<ImportSummary> {
  const file = parseImportFile(raw);
  await checkConsistency(db, file);
  return db.$transaction(
    async (tx) => {
      const summary: ImportSummary = {
        persons: { created: 0, updated: 0, unchanged: 0 },
        organizations: 0,
        groups: 0,
        memberships: 0,
        groupMemberships: 0,
      };
      const oids = file.persons.map((p) => p.oid);
      const existing = new Map(
        (oids.length ? await tx.person.findMany({ where: { oid: { in: oids } }, select: { oid: true, eTag: true } }) : []).map((p) => [p.oid, p.eTag]),
      );
      for (const p of file.persons) {
        const content = contentOf(p);
        const eTag = personETag(content);
        const before = existing.get(p.oid);
        if (before === eTag) {
          summary.persons.unchanged++;
          continue;
        }
        const updatedOn = p.updatedOn !== undefined ? new Date(p.updatedOn * 1000) : new Date();
        const data = { ...content, eTag, updatedOn };
        await tx.person.upsert({ where: { oid: p.oid }, create: data, update: data });
        summary.persons[before === undefined ? 'created' : 'updated']++;
      }
      for (const o of file.organizations) {
        const data = { ...o, type: o.type ?? 'LEGAL', active: o.active ?? true };
        await tx.organization.upsert({ where: { oid: o.oid }, create: data, update: data });
        summary.organizations++;
      }
      for (const g of file.groups) {
        const data = { ...g, description: g.description ?? '' };
        await tx.organizationGroup.upsert({ where: { grpId: g.grpId }, create: data, update: data });
        summary.groups++;
      }
      for (const m of file.memberships) {
        const data = {
          ...m,
          chief: m.chief ?? false,
          admin: m.admin ?? false,
          active: m.active ?? true,
          startDate: day(m.startDate),
          endDate: day(m.endDate),
        };
        await tx.personOrganization.upsert({
          where: { personOid_organizationOid: { personOid: m.personOid, organizationOid: m.organizationOid } },
          create: data,
          update: data,
        });
        summary.memberships++;
      }
      if (file.groupMemberships.length) {
        await tx.personGroup.createMany({ data: file.groupMemberships, skipDuplicates: true });
        summary.groupMemberships = file.groupMemberships.length;
      }
      return summary;
    },
    { timeout: 120_000, maxWait: 30_000 },
  );
}
