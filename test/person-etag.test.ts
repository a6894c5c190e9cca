import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importIdentity } from '../src/identity/import.js';
import { DATABASES } from './helpers/databases.js';
import { gql, NO_WORKERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { identityFixture, WIDE } from './helpers/identity-fixture.js';
import { bearer, makeKey } from './helpers/keys.js';
import { GATEWAY_RESOURCE, signingKey, startTestProvider, type TestProvider } from './helpers/oidc-provider.js';

// A person's eTag is a validator of the representation the caller receives (RFC 9110 8.8.3), so it says nothing of
// the fields X-IdpScopes or a token's consent withhold: changing only a withheld field leaves it as it was, and no
// guess of a withheld value can be checked against it. If-None-Match and 304 keep working per view, on GraphQL
// (`eTag`, `etag`) and on the legacy path (the ETag header), for API keys with X-IdpScopes and for tokens.

const PERSON = `query($oid: String!) { person(oid: $oid) { firstName gender birthDate citizenship eTag etag } }`;

/** The fixture's WIDE person with some fields replaced; the same updatedOn, so only those fields change. */
const wideWith = (fields: Record<string, string>) => ({ ...identityFixture().persons[0]!, ...fields });

describe.each(DATABASES)('person eTags per view on %s', (kind) => {
  let provider: TestProvider;
  let t: TestGateway;
  let key: string;
  beforeAll(async () => {
    provider = await startTestProvider([{ id: 'citizen', person: WIDE }], [await signingKey('k1')]);
    t = await startTestGateway(kind, {
      AUTH: 'on',
      ...NO_WORKERS,
      RATE_LIMIT_PER_MINUTE: '0',
      OIDC_ISSUER: provider.issuer,
      OIDC_AUDIENCE: GATEWAY_RESOURCE,
      OIDC_PERSON_CLAIM: 'person_oid',
      TRUSTED_DOCUMENTS: 'off',
    });
    await importIdentity(t.gateway.services.db, identityFixture());
    key = await makeKey(t, ['identity:read']);
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  /** The eTag a caller sees on GraphQL and on the legacy path (which must agree), and the legacy answer's status. */
  async function eTagsOf(headers: Record<string, string>, ifNoneMatch?: string) {
    const graphql = await gql(t.url, PERSON, { oid: WIDE }, headers);
    expect(graphql.errors).toBeUndefined();
    const person = graphql.data!.person as { eTag: string; etag: string; gender: string | null };
    expect(person.etag).toBe(person.eTag);
    const legacy = await fetch(`${t.url}/api/data/getPersonById?oid=${WIDE}`, { headers: { ...headers, ...(ifNoneMatch && { 'if-none-match': ifNoneMatch }) } });
    const header = legacy.headers.get('etag');
    expect(header).toBe(`"${person.eTag}"`);
    if (legacy.status === 200) expect(((await legacy.json()) as { eTag: string }).eTag).toBe(person.eTag);
    return { eTag: person.eTag, header: header!, status: legacy.status, person };
  }

  const callers: [string, () => Promise<Record<string, string>>][] = [
    ['an API key with X-IdpScopes fullname', async () => ({ ...bearer(key), 'x-idpscopes': 'fullname' })],
    ['a token whose person consented to fullname only', async () => bearer(await provider.token('citizen', 'fullname'))],
  ];

  it.each(callers)('%s: a withheld field, changed or guessed, leaves the eTag as it was; 304 holds per view', async (_name, credential) => {
    const restricted = await credential();
    await importIdentity(t.gateway.services.db, { persons: [wideWith({})] });
    const seen = await eTagsOf(restricted);
    expect(seen.person).toMatchObject({ firstName: 'Pavel', gender: null, birthDate: null, citizenship: null });
    const full = await eTagsOf(bearer(key));
    expect(full.eTag).not.toBe(seen.eTag);

    // Every value a guesser would try, written for real: the restricted eTag stays, and so does its 304.
    for (const withheld of [{ gender: 'F' }, { birthDate: '31.12.1999' }, { citizenship: 'KAZ' }, { gender: 'M', birthDate: '02.01.1980', citizenship: 'BLR' }] as Record<string, string>[]) {
      await importIdentity(t.gateway.services.db, { persons: [wideWith(withheld)] });
      const now = await eTagsOf(restricted, seen.header);
      expect(now.eTag).toBe(seen.eTag);
      expect(now.status).toBe(304);
      // The unrestricted view sees the change.
      expect((await eTagsOf(bearer(key))).eTag).not.toBe(full.eTag);
    }
    // Nor is it the unsalted hash of the whole record for any of those values (what the old eTag was).
    const record = (fields: Record<string, string>) => createHash('sha256').update(JSON.stringify(wideWith(fields))).digest('hex').slice(0, 32);
    expect([record({}), record({ gender: 'F' })]).not.toContain(seen.eTag);

    // A released field changes: the eTag changes, and the old one no longer matches.
    await importIdentity(t.gateway.services.db, { persons: [wideWith({ firstName: 'Petr' })] });
    const renamed = await eTagsOf(restricted, seen.header);
    expect(renamed.status).toBe(200);
    expect(renamed.eTag).not.toBe(seen.eTag);
    await importIdentity(t.gateway.services.db, { persons: [wideWith({})] });
  });

  it('callers who see the same fields get the same eTag; callers who see different fields get different ones', async () => {
    const byKey = await eTagsOf({ ...bearer(key), 'x-idpscopes': 'fullname' });
    const byToken = await eTagsOf(bearer(await provider.token('citizen', 'fullname')));
    expect(byToken.eTag).toBe(byKey.eTag);
    const wider = await eTagsOf({ ...bearer(key), 'x-idpscopes': 'fullname gender' });
    expect(wider.eTag).not.toBe(byKey.eTag);
    expect(wider.person.gender).toBe('M');
  });
});
