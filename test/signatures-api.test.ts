import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { gql, post, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { makeFixtures, type Fixtures } from './signatures/fixtures.js';
import { eventually } from './helpers/sink.js';

// Area E over HTTP (v1, v2 cloud/tech) and GraphQL on a real gateway: shapes, trust profiles, the trust
// mutation, the audit trail and bad input. Fixtures are made by OpenSSL (scripts/make-cms-fixtures.sh).

let f: Fixtures;
let dirs: { def: string; cloud: string; tech: string };
let data: string;

beforeAll(() => {
  f = makeFixtures();
  const mk = (name: string, files: string[]) => {
    const dir = join(f.dir, `trust-${name}`);
    mkdirSync(dir);
    for (const file of files) writeFileSync(join(dir, file), readFileSync(join(f.dir, file)));
    return dir;
  };
  // the untrusted chain's root is trusted only by the tech profile; the GOST root only by the default one
  dirs = { def: mk('default', ['root.pem', ...(f.gost ? ['gost-root.pem'] : [])]), cloud: mk('cloud', ['root.pem']), tech: mk('tech', ['root.pem', 'untrusted-root.pem']) };
  data = f.b64('data.txt');
});
afterAll(() => f?.cleanup());

const v2 = (url: string, profile: 'cloud' | 'tech', request: Record<string, unknown>, auditParameters?: Record<string, unknown>, headers: Record<string, string> = {}) =>
  post(url, `/v2/verify/cms/${profile}`, JSON.stringify({ request, ...(auditParameters && { auditParameters }) }), headers);
const v1 = (url: string, body: Record<string, unknown>) => post(url, '/v1/checkSign/cms', JSON.stringify(body));

const AUDITS = `query($filter: VerificationAuditFilter, $first: Int) {
  verificationAudits(filter: $filter, first: $first) { totalCount nodes { id createdAt profile userId systemId clientIp requestId alias businessProduct status valid message durationMs checkTime certificates { index subject issuer serialNumber status } } }
}`;

describe.each(DATABASES)('signature verification API on %s', (kind) => {
  let t: TestGateway;
  let url: string;
  const auditCount = async () => (await gql(url, AUDITS, { first: 1 })).data!.verificationAudits.totalCount as number;

  beforeAll(async () => {
    t = await startTestGateway(kind, { TRUST_DIR: dirs.def, TRUST_DIR_CLOUD: dirs.cloud, TRUST_DIR_TECH: dirs.tech, CMS_WORKERS: '2' });
    url = t.url;
  });
  afterAll(() => t?.close());

  it('v2 cloud: a detached RSA signature answers VERIFICATION_SUCCESS with per-signer details', async () => {
    const r = await v2(url, 'cloud', { cmsBase64: f.b64('rsa-detached.p7s'), dataBase64: data });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('VERIFICATION_SUCCESS');
    expect(r.body.result).toMatchObject({ valid: true, detached: true, contentType: '1.2.840.113549.1.7.1' });
    expect(r.body.result.signedData).toBeUndefined();
    const [s] = r.body.result.signers;
    expect(s).toMatchObject({
      index: 0,
      status: 'VERIFICATION_SUCCESS',
      subject: { commonName: 'RSA Signer', organization: 'Gateway Test', country: 'RU', email: 'rsa@example.test' },
      issuer: { commonName: 'Test Intermediate CA', name: 'CN=Test Intermediate CA,O=Gateway Test,C=RU' },
      digestAlgorithm: { oid: '2.16.840.1.101.3.4.2.1' },
      signatureAlgorithm: { oid: '1.2.840.113549.1.1.1' },
      chain: { valid: true, status: 'CERTIFICATE_CHAIN_IS_VALID' },
    });
    expect(s.serialNumber).toMatch(/^[0-9a-f]+$/);
    expect(Date.parse(s.validity.notBefore)).toBeLessThan(Date.parse(s.validity.notAfter));
    expect(Date.parse(s.signingTime)).not.toBeNaN();
    expect(s.chain.certificates).toEqual([expect.stringContaining('CN=RSA Signer'), 'CN=Test Intermediate CA,O=Gateway Test,C=RU', 'CN=Test Root CA,O=Gateway Test,C=RU']);
    expect(s.checks.map((c: { check: string }) => c.check).sort()).toEqual(['CERTIFICATE_VALIDITY', 'CHAIN', 'MESSAGE_DIGEST', 'SIGNATURE']);
  });

  it('v2 failure shapes: tampered content, missing data, needSignedData', async () => {
    const bad = await v2(url, 'cloud', { cmsBase64: f.b64('tampered-content.p7s') });
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({ status: 'CMS_INVALID_MESSAGE_DIGEST_ATTRIBUTE_ERROR', result: { valid: false } });
    const noData = await v2(url, 'tech', { cmsBase64: f.b64('ec256-detached.p7s') });
    expect(noData.body).toMatchObject({ status: 'CMS_NO_DATA_FOR_VERIFY_ERROR', result: { valid: false, signers: [] } });
    const withData = await v2(url, 'tech', { cmsBase64: f.b64('ec256-attached.p7s'), needSignedData: true });
    expect(withData.body.status).toBe('VERIFICATION_SUCCESS');
    expect(withData.body.result.signedData).toBe(data);
    const notDer = await v2(url, 'cloud', { cmsBase64: 'AAAA' });
    expect(notDer.body.status).toBe('INPUT_DATA_ERROR');
  });

  it('trust profiles: a root trusted only in tech passes tech and fails cloud', async () => {
    const req = { cmsBase64: f.b64('untrusted.p7s') };
    expect((await v2(url, 'tech', req)).body.status).toBe('VERIFICATION_SUCCESS');
    const cloud = await v2(url, 'cloud', req);
    expect(cloud.body.status).toBe('CERTIFICATE_CHAIN_BUILDING_ERROR');
    expect(cloud.body.result.signers[0].chain).toMatchObject({ valid: false, status: 'CERTIFICATE_CHAIN_BUILDING_ERROR' });
    // the v1 path uses the default profile, which does not trust it either
    expect((await v1(url, req)).body.status.code).toBe('CERTIFICATE_CHAIN_BUILDING_ERROR');
  });

  it('addTrustedRoot makes a chain pass; trustedRoots lists both sources; removeTrustedRoot undoes it', async () => {
    const req = { cmsBase64: f.b64('untrusted.p7s') };
    expect((await v2(url, 'cloud', req)).body.status).toBe('CERTIFICATE_CHAIN_BUILDING_ERROR');
    const pem = readFileSync(join(f.dir, 'untrusted-root.pem'), 'utf8');
    const add = await gql(url, 'mutation($pem: String!) { addTrustedRoot(profile: CLOUD, pem: $pem) { profile source fingerprint subject addedAt pem } }', { pem });
    expect(add.errors).toBeUndefined();
    expect(add.data!.addTrustedRoot).toMatchObject({ profile: 'CLOUD', source: 'API', subject: 'CN=Untrusted Root CA,O=Elsewhere,C=RU' });
    const fp = add.data!.addTrustedRoot.fingerprint as string;
    expect((await v2(url, 'cloud', req)).body.status).toBe('VERIFICATION_SUCCESS');
    const again = await gql(url, 'mutation($pem: String!) { addTrustedRoot(profile: CLOUD, pem: $pem) { fingerprint } }', { pem });
    expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    const list = await gql(url, '{ trustedRoots(profile: CLOUD) { source subject fingerprint } }');
    expect(list.data!.trustedRoots.map((r: { source: string; subject: string }) => `${r.source} ${r.subject}`)).toEqual([
      'DIRECTORY CN=Test Root CA,O=Gateway Test,C=RU',
      'API CN=Untrusted Root CA,O=Elsewhere,C=RU',
    ]);
    const bad = await gql(url, 'mutation { addTrustedRoot(profile: TECH, pem: "-----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----") { fingerprint } }');
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'pem', message: 'is not an X.509 certificate' }] });
    const removed = await gql(url, 'mutation($fp: String!) { removeTrustedRoot(profile: CLOUD, fingerprint: $fp) { fingerprint } }', { fp });
    expect(removed.data!.removeTrustedRoot.fingerprint).toBe(fp);
    expect((await v2(url, 'cloud', req)).body.status).toBe('CERTIFICATE_CHAIN_BUILDING_ERROR');
    const gone = await gql(url, 'mutation($fp: String!) { removeTrustedRoot(profile: CLOUD, fingerprint: $fp) { fingerprint } }', { fp });
    expect(gone.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it.runIf(kind === 'postgres')('a root added on one gateway process is trusted by another on the same database', async () => {
    const { startGateway } = await import('../src/app.js');
    const { loadConfig } = await import('../src/config.js');
    const { pino } = await import('pino');
    const other = await startGateway(
      loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', AUTH: 'off', ...t.db.env, TRUST_DIR: dirs.def, TRUST_DIR_CLOUD: dirs.cloud, TRUST_DIR_TECH: dirs.tech }),
      { log: pino({ level: 'silent' }) },
    );
    try {
      const req = { cmsBase64: f.b64('untrusted.p7s') };
      expect((await v1(other.url, req)).body.status.code).toBe('CERTIFICATE_CHAIN_BUILDING_ERROR'); // caches DEFAULT
      const pem = readFileSync(join(f.dir, 'untrusted-root.pem'), 'utf8');
      const add = await gql(url, 'mutation($pem: String!) { addTrustedRoot(profile: DEFAULT, pem: $pem) { fingerprint } }', { pem });
      let status = '';
      await eventually(async () => (status = (await v1(other.url, req)).body.status.code) === 'VERIFICATION_SUCCESS', 5000, 20).catch(() => undefined);
      expect(status).toBe('VERIFICATION_SUCCESS');
      await gql(url, 'mutation($fp: String!) { removeTrustedRoot(profile: DEFAULT, fingerprint: $fp) { fingerprint } }', { fp: add.data!.addTrustedRoot.fingerprint });
    } finally {
      await other.close();
    }
  });

  it('v1: success and failure in CheckSignResponseDto shape', async () => {
    const ok = await v1(url, { cmsBase64: f.b64('rsa-attached.p7s'), alias: 'a1', businessProduct: 'bp', cryptoNet: { name: 'any' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: { code: 'VERIFICATION_SUCCESS' }, result: 'VERIFICATION_SUCCESS', valid: true });
    expect(typeof ok.body.totalResultDescription).toBe('string');
    expect(ok.body.checkResults.map((c: { checkType: string }) => c.checkType)).toEqual(['MESSAGE_DIGEST', 'SIGNATURE', 'CERTIFICATE_VALIDITY', 'CHAIN']);
    expect(ok.body.checkResults[0]).toMatchObject({
      valid: true,
      code: 'VERIFICATION_SUCCESS',
      signerIndex: 0,
      certificateSubject: { commonName: 'RSA Signer', organization: 'Gateway Test', country: 'RU' },
      certificateIssuer: { commonName: 'Test Intermediate CA' },
      certificateData: { digestAlgorithmOid: '2.16.840.1.101.3.4.2.1' },
    });
    expect(ok.body.checkResults[0].certificateData.serialNumber).toMatch(/^[0-9a-f]+$/);
    const expired = await v1(url, { cmsBase64: f.b64('expired.p7s') });
    expect(expired.body).toMatchObject({ status: { code: 'CERTIFICATE_ERROR' }, result: 'VERIFICATION_FAIL', valid: false });
    expect(expired.body.checkResults.find((c: { checkType: string }) => c.checkType === 'CERTIFICATE_VALIDITY')).toMatchObject({ valid: false, code: 'CERTIFICATE_ERROR' });
    const pastTime = await v1(url, { cmsBase64: f.b64('expired.p7s'), checkTime: '2020-06-01T00:00:00Z' });
    expect(pastTime.body.checkResults.find((c: { checkType: string }) => c.checkType === 'CERTIFICATE_VALIDITY').valid).toBe(true);
    const notCms = await v1(url, { cmsBase64: f.b64('data-content.p7') });
    expect(notCms.body).toMatchObject({ status: { code: 'CMS_NOT_SUPPORTED_CONTENT_TYPE_ERROR' }, checkResults: [], valid: false });
  });

  it.runIf(gostEngine())('v1 GOST 2012-256 with digestParameter; a mismatching digestParameter fails', async () => {
    const ok = await v1(url, { cmsBase64: f.b64('gost256-A-detached.p7s'), dataBase64: data, digestParameter: 'HASH_GOST3411_2012_256' });
    expect(ok.body).toMatchObject({ valid: true, status: { code: 'VERIFICATION_SUCCESS' } });
    const wrong = await v1(url, { cmsBase64: f.b64('gost256-A-detached.p7s'), dataBase64: data, digestParameter: 'HASH_GOST3411_94' });
    expect(wrong.body).toMatchObject({ valid: false, status: { code: 'DIGEST_PARAMETER_ERROR' } });
  });

  it('every verification is audited (who, when, certificate, outcome), never the signed data', async () => {
    const cms = f.b64('rsa-detached.p7s');
    const r = await v2(url, 'tech', { cmsBase64: cms, dataBase64: data, needSignedData: true }, { userId: 'user-7', systemId: 'sys-1', clientIp: '10.0.0.7', customParameters: [{ name: 'k', value: 'v' }] }, { 'x-request-id': 'req-42' });
    expect(r.body.status).toBe('VERIFICATION_SUCCESS');
    const list = await gql(url, AUDITS, { filter: { userId: 'user-7' } });
    expect(list.data!.verificationAudits.totalCount).toBe(1);
    const [a] = list.data!.verificationAudits.nodes;
    expect(a).toMatchObject({ id: r.body.result.auditId, profile: 'TECH', userId: 'user-7', systemId: 'sys-1', clientIp: '10.0.0.7', requestId: 'req-42', status: 'VERIFICATION_SUCCESS', valid: true });
    expect(a.certificates).toEqual([expect.objectContaining({ index: 0, subject: expect.stringContaining('CN=RSA Signer'), issuer: 'CN=Test Intermediate CA,O=Gateway Test,C=RU', serialNumber: r.body.result.signers[0].serialNumber })]);
    const rows = await t.gateway.services.db.verificationAudit.findMany();
    const stored = JSON.stringify(rows);
    for (const secret of [data, cms.slice(0, 40), 'Hello CMS fixture']) expect(stored).not.toContain(secret);
    const failed = await gql(url, AUDITS, { filter: { status: 'CERTIFICATE_CHAIN_BUILDING_ERROR', profile: 'CLOUD' } });
    expect(failed.data!.verificationAudits.totalCount).toBeGreaterThan(0);
  });

  it('bad requests answer 400 in the area envelope and write nothing', async () => {
    const before = await auditCount();
    const missing = await post(url, '/v2/verify/cms/cloud', JSON.stringify({ auditParameters: {} }));
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ status: 'REQUEST_VALIDATION_ERROR', result: { valid: false, errors: [{ field: 'body.request' }] } });
    const audit = await v2(url, 'cloud', { cmsBase64: f.b64('rsa-attached.p7s') }, { userId: 5, extra: 'x' });
    expect(audit.status).toBe(400);
    expect(audit.body.status).toBe('AUDIT_PARAMETERS_ERROR');
    expect(audit.body.result.errors.map((e: { field: string }) => e.field).sort()).toEqual(['body.auditParameters.extra', 'body.auditParameters.userId']);
    const notB64 = await v2(url, 'tech', { cmsBase64: 'not base64!' });
    expect(notB64).toMatchObject({ status: 400, body: { status: 'INPUT_DATA_ERROR', result: { errors: [{ field: 'body.request.cmsBase64', message: 'must be base64' }] } } });
    const badTime = await v2(url, 'tech', { cmsBase64: f.b64('rsa-attached.p7s'), checkTime: 'yesterday', digestParameter: 'MD5' });
    expect(badTime.body.status).toBe('REQUEST_VALIDATION_ERROR');
    expect(badTime.body.result.errors.map((e: { field: string }) => e.field).sort()).toEqual(['body.request.checkTime', 'body.request.digestParameter']);
    const notJson = await post(url, '/v2/verify/cms/tech', '{nope');
    expect(notJson).toMatchObject({ status: 400, body: { status: 'REQUEST_VALIDATION_ERROR' } });
    const v1bad = await v1(url, { cmsBase64: f.b64('rsa-attached.p7s'), unknownField: 1 });
    expect(v1bad.status).toBe(400);
    expect(v1bad.body).toMatchObject({ status: { code: 'REQUEST_VALIDATION_ERROR', errorDetails: [{ field: 'body.unknownField', message: 'is not a known field' }] }, result: 'VERIFICATION_FAIL', checkResults: [], valid: false });
    const v1audit = await v1(url, { cmsBase64: f.b64('rsa-attached.p7s'), auditParameters: { customParameters: [{ name: '' , value: 'x' }] } });
    expect(v1audit).toMatchObject({ status: 400, body: { status: { code: 'AUDIT_PARAMETERS_ERROR' } } });
    const get = await fetch(`${url}/v1/checkSign/cms`);
    expect(get.status).toBe(405);
    expect(await auditCount()).toBe(before);
  });

  it('/openapi.json documents the three paths with their bodies', async () => {
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, any> };
    for (const p of ['/v2/verify/cms/cloud', '/v2/verify/cms/tech', '/v1/checkSign/cms']) expect(JSON.stringify(doc.paths[p]?.post), p).toContain('cmsBase64');
  });

  it('GraphQL verifyCms: typed result, profile choice, field-named bad input', async () => {
    const q = `mutation($input: CmsVerificationInput!) { verifyCms(input: $input) { status valid auditId signers { subject { commonName } chain { status subjects } checks { name ok } } } }`;
    const r = await gql(url, q, { input: { profile: 'TECH', cmsBase64: f.b64('untrusted.p7s'), audit: { userId: 'gql-user' } } });
    expect(r.errors).toBeUndefined();
    expect(r.data!.verifyCms).toMatchObject({ status: 'VERIFICATION_SUCCESS', valid: true, signers: [{ subject: { commonName: 'Signer Under Untrusted Root' }, chain: { status: 'CERTIFICATE_CHAIN_IS_VALID' } }] });
    const bad = await gql(url, q, { input: { cmsBase64: '', audit: { userId: 'x'.repeat(300) } } });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((bad.errors?.[0]?.extensions?.fields as { field: string }[]).map((x) => x.field).sort()).toEqual(['input.audit.userId', 'input.cmsBase64']);
  });
});

describe('trust directories', () => {
  it('a TRUST_DIR that cannot be read stops start-up with its name', async () => {
    await expect(startTestGateway('pglite', { TRUST_DIR_TECH: join(f.dir, 'no-such-dir') })).rejects.toThrow(/trust directory .*no-such-dir cannot be read/);
  });
});

function gostEngine(): boolean {
  // fixtures are made in beforeAll; the GOST engine is a machine property, checked the way the script does
  try {
    return readFileSync('/var/lib/dpkg/status', 'utf8').includes('Package: libengine-gost-openssl');
  } catch {
    return false;
  }
}
