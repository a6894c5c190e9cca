import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { importIdentity } from '../src/identity/import.js';
import { BASE_FIELDS, SCOPE_FIELDS } from '../src/identity/scopes.js';
import { ValidationError } from '../src/errors.js';
import { plannedQueryCounts } from '../src/schema/planned-query.js';
import { DATABASES } from './helpers/databases.js';
import { gql, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { identityFixture, LONE, NARROW, WIDE } from './helpers/identity-fixture.js';
import { sendTogether } from './helpers/together.js';

// The four identity paths of spec 4.1 over HTTP, their GraphQL twins, scopes, ETag/304, import and the query count.

const PERSON_FIELDS = [
  'stateFacts', 'firstName', 'lastName', 'middleName', 'birthDate', 'birthPlace', 'gender', 'trusted', 'rfgUOperatorCheck',
  'citizenship', 'snils', 'inn', 'updatedOn', 'status', 'verifying', 'rIdDoc', 'containsUpCfmCode', 'eTag', 'links', 'ridDoc', 'etag',
];

async function get(url: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
}

/**
 * Runs `body` with the gateway's Prisma client swapped for one that counts its statements; `counted()` answers how
 * many ran since its last call.
 */
async function withCountedQueries(t: TestGateway, body: (counted: () => number) => Promise<void>): Promise<void> {
  const services = t.gateway.services;
  const original = services.db;
  const counting = new PrismaClient({ adapter: t.gateway.database.adapterFactory, log: [{ emit: 'event', level: 'query' }] });
  let queries = 0;
  counting.$on('query', () => void queries++);
  services.db = counting;
  try {
    await body(() => {
      const n = queries;
      queries = 0;
      return n;
    });
  } finally {
    services.db = original;
    await counting.$disconnect();
  }
}

describe.each(DATABASES)('identity on %s', (kind) => {
  let t: TestGateway;
  let url: string;
  beforeAll(async () => {
    t = await startTestGateway(kind);
    url = t.url;
    await importIdentity(t.gateway.services.db, identityFixture());
  });
  afterAll(() => t?.close());

  it('demo data is loaded only into the embedded database', async () => {
    const r = await get(url, '/api/data/getPersonById?oid=1000000001');
    expect(r.status).toBe(kind === 'pglite' ? 200 : 404);
  });

  it('getPersonById answers the spec 2.3 record with both eTag/etag and rIdDoc/ridDoc, and an ETag header', async () => {
    const r = await get(url, `/api/data/getPersonById?oid=${WIDE}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(PERSON_FIELDS);
    expect(r.body).toMatchObject({
      stateFacts: ['EntityRoot'], firstName: 'Pavel', lastName: 'Orlov', middleName: 'Ivanovich', birthDate: '01.01.1980', gender: 'M',
      trusted: true, rfgUOperatorCheck: true, citizenship: 'RUS', snils: '111-222-333 44', inn: '770000000001', updatedOn: 1760000000,
      status: 'REGISTERED', verifying: false, rIdDoc: 9000000001, ridDoc: 9000000001, containsUpCfmCode: false,
    });
    expect(r.body.etag).toBe(r.body.eTag);
    expect(r.body.eTag).toMatch(/^[0-9a-f]{32}$/);
    expect(r.headers.get('etag')).toBe(`"${r.body.eTag}"`);
    expect(r.body.links).toContain(`/api/data/getPersonOrganizationsById?oid=${WIDE}`);
    // Fields a person does not have are left out.
    const lone = await get(url, `/api/data/getPersonById?oid=${LONE}`);
    expect(lone.body).not.toHaveProperty('middleName');
    expect(lone.body).not.toHaveProperty('rIdDoc');
  });

  it('a missing or malformed oid is 400 with a JSON error; an unknown oid is 404', async () => {
    for (const path of ['/api/data/getPersonById', '/api/data/getPersonOrganizationsById', '/api/data/orgs/getPersonGroupsOrganizationsById', '/api/data/orgs/getPersonEmplOrganizationsById']) {
      const missing = await get(url, path);
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'query.oid', message: 'is required' }] });
      const bad = await get(url, `${path}?oid=12ab`);
      expect(bad.status).toBe(400);
      expect(bad.body.error.fields).toEqual([{ field: 'query.oid', message: 'must be an oid: 1 to 20 digits' }]);
      const unknown = await get(url, `${path}?oid=999999`);
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'person "999999" not found' });
    }
  });

  it('If-None-Match with the current eTag is 304 without a body; a changed record has a new eTag', async () => {
    const first = await get(url, `/api/data/getPersonById?oid=${NARROW}`);
    const etag = first.headers.get('etag')!;
    const again = await get(url, `/api/data/getPersonById?oid=${NARROW}`, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect((await get(url, `/api/data/getPersonById?oid=${NARROW}`, { 'if-none-match': 'W/"other", *' })).status).toBe(304);
    expect((await get(url, `/api/data/getPersonById?oid=${NARROW}`, { 'if-none-match': '"other"' })).status).toBe(200);

    const fixture = identityFixture();
    const narrow = { ...fixture.persons[1]!, birthPlace: 'Pskov' };
    await importIdentity(t.gateway.services.db, { persons: [narrow] });
    const changed = await get(url, `/api/data/getPersonById?oid=${NARROW}`, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.body.birthPlace).toBe('Pskov');
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('X-IdpScopes releases fields per scope, space- or comma-separated; an unknown scope is 400', async () => {
    const base = [...BASE_FIELDS];
    const only = async (header: string) => Object.keys((await get(url, `/api/data/getPersonById?oid=${WIDE}`, { 'x-idpscopes': header })).body).sort();
    expect(await only('')).toEqual([...base].sort());
    expect(await only('fullname')).toEqual([...base, ...SCOPE_FIELDS.fullname].sort());
    expect(await only('fullname,birthdate  snils')).toEqual([...base, 'firstName', 'lastName', 'middleName', 'birthDate', 'snils'].sort());
    expect(await only('id_doc')).toEqual([...base, 'rIdDoc', 'ridDoc'].sort());
    expect(await only('gender birthplace citizenship inn usr_org openid')).toEqual([...base, 'gender', 'birthPlace', 'citizenship', 'inn'].sort());
    const bad = await get(url, `/api/data/getPersonById?oid=${WIDE}`, { 'x-idpscopes': 'fullname passport' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0].field).toBe('headers.x-idpscopes');
  });

  it('getPersonOrganizationsById lists the person\'s organizations with chief/admin flags', async () => {
    const r = await get(url, `/api/data/getPersonOrganizationsById?oid=${WIDE}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['stateFacts', 'size', 'elements', 'links']);
    expect(r.body).toMatchObject({ stateFacts: ['hasSize'], size: 50, links: [] });
    expect(r.body.elements[0]).toEqual({
      oid: '4000000000', shortName: 'Org 0', fullName: 'Organization number 0', type: 'AGENCY', ogrn: '1027700000000', inn: '7700000000',
      kpp: '770001001', leg: '12300', active: true, chief: true, admin: true,
    });
    expect(r.body.elements[7].active).toBe(false);
    const none = await get(url, `/api/data/getPersonOrganizationsById?oid=${LONE}`);
    expect(none.body).toEqual({ stateFacts: ['hasSize'], size: 0, elements: [], links: [] });
  });

  it('getPersonGroupsOrganizationsById lists groups with their organizations; X-IdpScopes without usr_org is 403', async () => {
    const r = await get(url, `/api/data/orgs/getPersonGroupsOrganizationsById?oid=${WIDE}`, { 'x-idpscopes': 'usr_org' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      stateFacts: ['hasSize'],
      size: 2,
      elements: [
        { grpId: 'G_ADMINS', name: 'Admins', description: 'Administrators', itSystem: 'ESIA', orgOid: '4000000000', orgShortName: 'Org 0', orgFullName: 'Organization number 0' },
        { grpId: 'G_SIGN', name: 'Signers', description: '', orgOid: '4000000001', orgShortName: 'Org 1', orgFullName: 'Organization number 1' },
      ],
      links: [],
    });
    const denied = await get(url, `/api/data/orgs/getPersonGroupsOrganizationsById?oid=${WIDE}`, { 'x-idpscopes': 'fullname' });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('FORBIDDEN');
    expect((await get(url, `/api/data/orgs/getPersonGroupsOrganizationsById?oid=${WIDE}`, { 'x-idpscopes': 'usr_org nope' })).status).toBe(400);
  });

  it('getPersonEmplOrganizationsById pages with pageSize and 1-based pageIndex', async () => {
    const r = await get(url, `/api/data/orgs/getPersonEmplOrganizationsById?oid=${WIDE}&pageSize=20&pageIndex=3`, { 'x-idpscopes': 'usr_org' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['stateFacts', 'size', 'pageSize', 'pageIndex', 'totalSize', 'elements', 'links']);
    expect(r.body).toMatchObject({ stateFacts: ['hasSize'], size: 10, pageSize: 20, pageIndex: 3, totalSize: 50, links: [] });
    expect(r.body.elements[0]).toEqual({
      oid: '4000000040', shortName: 'Org 40', fullName: 'Organization number 40', type: 'AGENCY', ogrn: '1027700000040', inn: '7700000040',
      kpp: '770001001', leg: '12300', position: 'Position 40', role: 'employee', chief: false, admin: false, active: true, startDate: '2020-01-01T00:00:00.000Z',
    });
    const first = await get(url, `/api/data/orgs/getPersonEmplOrganizationsById?oid=${WIDE}`);
    expect(first.body).toMatchObject({ size: 50, pageSize: 50, pageIndex: 1, totalSize: 50 });
    const bad = await get(url, `/api/data/orgs/getPersonEmplOrganizationsById?oid=${WIDE}&pageSize=0&pageIndex=x`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual(['query.pageIndex', 'query.pageSize']);
    expect((await get(url, `/api/data/orgs/getPersonEmplOrganizationsById?oid=${WIDE}`, { 'x-idpscopes': 'snils' })).status).toBe(403);
  });

  it('reads of one person arriving together (one statement) are each filtered by their own X-IdpScopes, on both doors', async () => {
    const query = `query($oid: String!) { person(oid: $oid) { ${PERSON_FIELDS.join(' ')} } }`;
    const nonNull = (person: Record<string, unknown>) => Object.keys(person).filter((field) => person[field] !== null).sort();
    // With no header every field is released: the fields this person has at all.
    const held = new Set(nonNull((await gql(url, query, { oid: WIDE })).data!.person));
    const headers = ['', 'fullname', 'snils', 'id_doc', 'fullname snils inn'];
    const expected = (header: string) => [...new Set([...BASE_FIELDS, ...header.split(' ').filter(Boolean).flatMap((scope) => SCOPE_FIELDS[scope as keyof typeof SCOPE_FIELDS])])].sort();
    const asked = [...headers, ...headers, ...headers];
    const answers = await sendTogether(url, [
      ...asked.map((header) => ({ method: 'GET' as const, path: `/api/data/getPersonById?oid=${WIDE}`, headers: { 'x-idpscopes': header } })),
      ...asked.map((header) => ({ method: 'POST' as const, path: '/graphql', headers: { 'content-type': 'application/json', 'x-idpscopes': header }, body: JSON.stringify({ query, variables: { oid: WIDE } }) })),
    ]);
    asked.forEach((header, i) => {
      expect(Object.keys(answers[i]!.body).sort()).toEqual(expected(header));
      expect(nonNull(answers[asked.length + i]!.body.data.person)).toEqual(expected(header).filter((field) => held.has(field)));
    });
  });

  it('different persons with organizations read together (shared statements) each get their own memberships, on both doors', async () => {
    const query = 'query($oid: String!) { person(oid: $oid) { oid organizations { chief admin active role startDate organization { oid shortName active } } } }';
    const oids = [WIDE, NARROW, LONE, '42', WIDE, NARROW];
    const legacy = (oid: string) => ({ method: 'GET' as const, path: `/api/data/getPersonOrganizationsById?oid=${oid}` });
    const graphql = (oid: string) => ({ method: 'POST' as const, path: '/graphql', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables: { oid } }) });
    // Each asked alone first: what every answer read together must equal.
    const expected = [];
    for (const oid of oids) {
      const { status: _status, ...answer } = await gql(url, query, { oid });
      expected.push((await get(url, legacy(oid).path)).body, answer);
    }
    const together = await sendTogether(url, oids.flatMap((oid) => [legacy(oid), graphql(oid)]));
    expect(together.map((answer) => answer.body)).toEqual(expected);
    expect(expected[0].size).toBe(50);
    expect(expected[2]).toMatchObject({ size: 1, elements: [{ oid: '4000000000', chief: false }] });
    expect(expected[4]).toEqual({ stateFacts: ['hasSize'], size: 0, elements: [], links: [] });
    expect(expected[6].error.code).toBe('NOT_FOUND');
    expect(expected[1].data.person.organizations[0]).toMatchObject({ chief: true, organization: { oid: '4000000000', shortName: 'Org 0' } });
    expect(expected[1].data.person.organizations.map((m: { organization: { oid: string } }) => m.organization.oid)).toEqual(expected[0].elements.map((e: { oid: string }) => e.oid));
  });

  it('GraphQL person and organization: nested lists, paging and the same scope filter', async () => {
    const q = `query($oid: String!) { person(oid: $oid) { oid firstName snils rIdDoc eTag
      organizations { chief organization { oid } } groups { group { grpId } }
      employmentCount employments(pageSize: 2, pageIndex: 2) { position organization { shortName } } } }`;
    const all = await gql(url, q, { oid: WIDE });
    expect(all.errors).toBeUndefined();
    expect(all.data!.person).toMatchObject({ oid: WIDE, firstName: 'Pavel', snils: '111-222-333 44', rIdDoc: 9000000001, employmentCount: 50 });
    expect(all.data!.person.organizations).toHaveLength(50);
    expect(all.data!.person.groups.map((g: any) => g.group.grpId)).toEqual(['G_ADMINS', 'G_SIGN']);
    expect(all.data!.person.employments).toEqual([{ position: 'Position 2', organization: { shortName: 'Org 2' } }, { position: 'Position 3', organization: { shortName: 'Org 3' } }]);

    const scoped = await gql(url, 'query($oid: String!) { person(oid: $oid) { oid firstName snils rIdDoc eTag } }', { oid: WIDE }, { 'x-idpscopes': 'snils' });
    expect(scoped.data!.person).toMatchObject({ oid: WIDE, firstName: null, snils: '111-222-333 44', rIdDoc: null });
    expect(scoped.data!.person.eTag).toMatch(/^[0-9a-f]{32}$/);
    const denied = await gql(url, q, { oid: WIDE }, { 'x-idpscopes': 'fullname' });
    expect(denied.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN' });
    const unknown = await gql(url, 'query($oid: String!) { person(oid: $oid) { oid } }', { oid: WIDE }, { 'x-idpscopes': 'bogus' });
    expect(unknown.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    const bad = await gql(url, 'query { person(oid: "x1") { oid } }');
    expect(bad.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'oid', message: 'must be an oid: 1 to 20 digits' }] });
    expect((await gql(url, 'query { person(oid: "42") { oid } }')).errors![0]!.extensions).toMatchObject({ code: 'NOT_FOUND' });
    const badPage = await gql(url, `query { person(oid: "${WIDE}") { employments(pageSize: 0) { position } } }`);
    expect(badPage.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });

    const org = await gql(url, 'query { organization(oid: "4000000000") { oid shortName groups { grpId } members { position person { oid lastName snils } } } }', {}, { 'x-idpscopes': 'usr_org fullname' });
    expect(org.errors).toBeUndefined();
    expect(org.data!.organization).toMatchObject({ oid: '4000000000', shortName: 'Org 0', groups: [{ grpId: 'G_ADMINS' }] });
    expect(org.data!.organization.members).toEqual([
      { position: 'Position 0', person: { oid: WIDE, lastName: 'Orlov', snils: null } },
      { position: 'Clerk', person: { oid: NARROW, lastName: 'Lebedeva', snils: null } },
    ]);
    expect((await gql(url, 'query { organization(oid: "4000000000") { members { position } } }', {}, { 'x-idpscopes': 'fullname' })).errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN' });
  });

  it('a document asked again reuses its plan, unless the plan read a variable or the caller', async () => {
    await withCountedQueries(t, async (counted) => {
      const ask = async (query: string, variables: Record<string, unknown>, headers: Record<string, string> = {}) => {
        counted();
        const before = plannedQueryCounts();
        const r = await gql(url, query, variables, headers);
        expect(r.errors).toBeUndefined();
        const after = plannedQueryCounts();
        return { data: r.data!, queries: counted(), planned: after.planned - before.planned, reused: after.reused - before.reused };
      };
      // Asked first for one person, then for others: every answer as when planned, and no more statements (a mapping
      // missing on a reused plan would make each organization load on its own).
      const nested = 'query($oid: String!) { person(oid: $oid) { oid organizations { chief organization { oid shortName } } groups { group { grpId } } } }';
      const first = await ask(nested, { oid: NARROW });
      expect(first).toMatchObject({ planned: 1, reused: 0 });
      const wide = await ask(nested, { oid: WIDE });
      expect(wide).toMatchObject({ planned: 0, reused: 1, queries: first.queries });
      expect(wide.data.person.organizations).toHaveLength(50);
      expect(wide.data.person.organizations[1]).toEqual({ chief: false, organization: { oid: '4000000001', shortName: 'Org 1' } });
      expect(wide.data.person.groups.map((g: { group: { grpId: string } }) => g.group.grpId)).toEqual(['G_ADMINS', 'G_SIGN']);
      expect(await ask(nested, { oid: NARROW })).toEqual({ ...first, planned: 0, reused: 1 });
      // A variable under the field (here a directive's) is read by the plan: planned for each request, each right.
      const maybe = 'query($oid: String!, $orgs: Boolean!) { person(oid: $oid) { oid organizations @include(if: $orgs) { organization { oid } } } }';
      for (const orgs of [true, false, true]) {
        const r = await ask(maybe, { oid: WIDE, orgs });
        expect(r).toMatchObject({ planned: 1, reused: 0 });
        expect(r.data.person.organizations?.length).toBe(orgs ? 50 : undefined);
      }
      // Organization.members asks who the caller is: planned for each request.
      const members = 'query { organization(oid: "4000000000") { oid members { position } } }';
      for (let i = 0; i < 2; i++) expect(await ask(members, {}, { 'x-idpscopes': 'usr_org fullname' })).toMatchObject({ planned: 1, reused: 0 });
    });
  });

  it('one person with 50 organizations is answered with a constant number of SQL queries', async () => {
    await withCountedQueries(t, async (counted) => {
      const q = `query($oid: String!) { person(oid: $oid) { oid lastName
        organizations { position chief organization { oid shortName groups { grpId } } }
        groups { group { grpId organization { oid } } }
        employmentCount employments(pageSize: 50) { position organization { oid } } } }`;
      const count = async (oid: string, size: number) => {
        counted();
        const r = await gql(url, q, { oid });
        expect(r.errors).toBeUndefined();
        expect(r.data!.person.organizations).toHaveLength(size);
        return counted();
      };
      const wide = await count(WIDE, 50);
      const narrow = await count(NARROW, 1);
      expect(wide).toBe(narrow);
      expect(wide).toBeGreaterThan(0);
      expect(wide).toBeLessThanOrEqual(12);
      counted();
      await get(url, `/api/data/getPersonOrganizationsById?oid=${WIDE}`);
      const restWide = counted();
      await get(url, `/api/data/getPersonOrganizationsById?oid=${NARROW}`);
      expect(restWide).toBe(counted());
    });
  });

  it('import is idempotent and refuses a file with one bad record without changing anything', async () => {
    const db = t.gateway.services.db;
    const fixture = identityFixture();
    fixture.persons[1] = { ...fixture.persons[1]!, birthPlace: 'Pskov' } as never; // as changed by the ETag test
    const before = await db.person.findMany({ orderBy: { oid: 'asc' }, select: { oid: true, eTag: true, updatedOn: true } });
    const again = await importIdentity(db, fixture);
    expect(again.persons).toEqual({ created: 0, updated: 0, unchanged: 3 });
    expect(await db.person.findMany({ orderBy: { oid: 'asc' }, select: { oid: true, eTag: true, updatedOn: true } })).toEqual(before);
    expect(await db.personOrganization.count({ where: { personOid: WIDE } })).toBe(50);

    const bad = {
      persons: [{ oid: '3000000099', firstName: 'New', lastName: 'Person' }, { oid: '3000000098', firstName: 'Bad', lastName: 'Snils', snils: '123' }],
      organizations: [{ oid: '4000009999', shortName: 'N', fullName: 'New org' }],
    };
    const refused = await importIdentity(db, bad).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).issues).toEqual([{ field: 'persons[1].snils', message: 'must be written 000-000-000 00' }]);
    const dangling = { persons: [{ oid: '3000000099', firstName: 'New', lastName: 'Person' }], memberships: [{ personOid: '3000000099', organizationOid: '4999999999' }] };
    const refused2 = await importIdentity(db, dangling).catch((e: unknown) => e);
    expect((refused2 as ValidationError).issues).toEqual([{ field: 'memberships[0].organizationOid', message: 'names unknown organization "4999999999"' }]);
    expect(await db.person.findUnique({ where: { oid: '3000000099' } })).toBeNull();
    expect(await db.organization.findUnique({ where: { oid: '4000009999' } })).toBeNull();
  });

  it.runIf(kind === 'postgres')('`tsx src/main.ts import <file>` imports a file and reports a bad one by position', () => {
    const dir = mkdtempSync(join(tmpdir(), 'identity-import-'));
    const good = join(dir, 'good.json');
    const bad = join(dir, 'bad.json');
    writeFileSync(good, JSON.stringify({ persons: [{ oid: '3000000077', firstName: 'Cli', lastName: 'Person' }] }));
    writeFileSync(bad, JSON.stringify({ persons: [{ oid: '3000000078', firstName: 'Cli', lastName: 'Bad', gender: 'X' }] }));
    const env = { ...process.env, ...t.db.env, LOG_LEVEL: 'silent', PATH: `${join(process.cwd(), 'node_modules/.bin')}:${process.env.PATH ?? ''}` };
    const run = (file: string) => spawnSync('node_modules/.bin/tsx', ['src/main.ts', 'import', file], { env, encoding: 'utf8' });
    const ok = run(good);
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).imported.persons).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect(JSON.parse(run(good).stdout).imported.persons).toEqual({ created: 0, updated: 0, unchanged: 1 });
    const refused = run(bad);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('persons[0].gender: must be M or F');
  });
});
