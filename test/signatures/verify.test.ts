import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCms, type CmsVerificationInput } from '../../src/signatures/verify.js';
import { makeFixtures, OID_BYTES, patchFirst, withLastByte, type Fixtures } from './fixtures.js';

let fx: Fixtures;
let roots: Uint8Array[];
let data: string;

beforeAll(() => {
  fx = makeFixtures();
  roots = ['root.der', ...(fx.gost ? ['gost-root.der', 'gost2001.der'] : [])].map((f) => fx.bytes(f));
  data = fx.b64('data.txt');
});
afterAll(() => fx?.cleanup());

const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
const run = (input: CmsVerificationInput) => verifyCms(input, { trustedRoots: roots });
const status = async (input: CmsVerificationInput): Promise<string> => (await run(input)).status;

describe('valid signatures made by OpenSSL', () => {
  it.each([
    ['rsa-attached.p7s', false],
    ['rsa-detached.p7s', true],
    ['rsa-sha512.p7s', false],
    ['rsa-pss.p7s', false],
    ['rsa-noattr.p7s', false],
    ['rsa-keyid.p7s', false],
    ['ec256-attached.p7s', false],
    ['ec256-detached.p7s', true],
    ['ec256-noattr-detached.p7s', true],
    ['ec384-attached.p7s', false],
    ['two-signers.p7s', false],
  ])('%s -> VERIFICATION_SUCCESS', async (file, detached) => {
    const r = await run({ cmsBase64: fx.b64(file), dataBase64: detached ? data : undefined });
    expect(r.status).toBe('VERIFICATION_SUCCESS');
    expect(r.valid).toBe(true);
    expect(r.detached).toBe(detached);
    for (const s of r.signers) expect(s.checks.every((c) => c.ok)).toBe(true);
  });

  it('reports signer details, checks and the chain', async () => {
    const r = await run({ cmsBase64: fx.b64('rsa-attached.p7s'), needSignedData: true });
    expect(r.signedData).toBe(data);
    expect(r.signers).toHaveLength(1);
    const s = r.signers[0]!;
    expect(s.subject?.attributes.CN).toBe('RSA Signer');
    expect(s.subject?.attributes.E).toBe('rsa@example.test');
    expect(s.subject?.rdn).toBe('E=rsa@example.test,CN=RSA Signer,O=Gateway Test,C=RU');
    expect(s.issuer?.rdn).toBe('CN=Test Intermediate CA,O=Gateway Test,C=RU');
    expect(s.serialNumber).toMatch(/^[0-9a-f]+$/);
    expect(s.digestAlgorithm).toEqual({ oid: '2.16.840.1.101.3.4.2.1', name: 'SHA-256' });
    expect(s.signatureAlgorithm.oid).toBe('1.2.840.113549.1.1.1');
    expect(s.signingTime).not.toBeNull();
    expect(s.notBefore).not.toBeNull();
    expect(s.checks.map((c) => c.name)).toEqual(['MESSAGE_DIGEST', 'SIGNATURE', 'CERTIFICATE_VALIDITY', 'CHAIN']);
    expect(s.chain?.subjects).toEqual([
      'E=rsa@example.test,CN=RSA Signer,O=Gateway Test,C=RU',
      'CN=Test Intermediate CA,O=Gateway Test,C=RU',
      'CN=Test Root CA,O=Gateway Test,C=RU',
    ]);
    expect(s.chain?.status).toBe('CERTIFICATE_CHAIN_IS_VALID');
  });

  it('omits signedData unless asked', async () => {
    const r = await run({ cmsBase64: fx.b64('rsa-attached.p7s') });
    expect(r.signedData).toBeUndefined();
    const d = await run({ cmsBase64: fx.b64('rsa-detached.p7s'), dataBase64: data, needSignedData: true });
    expect(d.signedData).toBe(data);
  });
});

describe('GOST signatures made by OpenSSL gost engine', () => {
  it('the gost engine was available to the fixture script', () => {
    expect(fx.gost, 'install the packages in scripts/ci-apt-packages.txt').toBe(true);
  });
  it.each(['gost256-A', 'gost256-TCA', 'gost512-A', 'gost512-C'])('%s attached and detached -> VERIFICATION_SUCCESS', async (name) => {
    const a = await run({ cmsBase64: fx.b64(`${name}-attached.p7s`) });
    expect(a.status, a.message).toBe('VERIFICATION_SUCCESS');
    expect(a.signers[0]?.chain?.subjects).toEqual([`CN=GOST ${name},O=Gateway Test,C=RU`, 'CN=GOST Root CA,O=Gateway Test,C=RU']);
    const d = await run({ cmsBase64: fx.b64(`${name}-detached.p7s`), dataBase64: data });
    expect(d.status, d.message).toBe('VERIFICATION_SUCCESS');
  });
  it('GOST R 34.10-2001 with GOST R 34.11-94 -> VERIFICATION_SUCCESS', async () => {
    const r = await run({ cmsBase64: fx.b64('gost2001-attached.p7s'), digestParameter: 'HASH_GOST3411_94' });
    expect(r.status, r.message).toBe('VERIFICATION_SUCCESS');
    expect(r.signers[0]?.signatureAlgorithm).toEqual({ oid: '1.2.643.2.2.19', name: 'GOST R 34.10-2001' });
  });
  it('tampered GOST content -> CMS_INVALID_MESSAGE_DIGEST_ATTRIBUTE_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('gost256-A-tampered.p7s') })).toBe('CMS_INVALID_MESSAGE_DIGEST_ATTRIBUTE_ERROR');
  });
  it('GOST signature over other detached data -> CMS_INVALID_MESSAGE_DIGEST_ATTRIBUTE_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('gost512-C-detached.p7s'), dataBase64: fx.b64('other.txt') })).toBe(
      'CMS_INVALID_MESSAGE_DIGEST_ATTRIBUTE_ERROR',
    );
  });
  it('digestParameter: matching passes, different -> DIGEST_PARAMETER_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('gost256-A-attached.p7s'), digestParameter: 'HASH_GOST3411_2012_256' })).toBe('VERIFICATION_SUCCESS');
    expect(await status({ cmsBase64: fx.b64('gost512-A-attached.p7s'), digestParameter: 'HASH_GOST3411_2012_512' })).toBe('VERIFICATION_SUCCESS');
    expect(await status({ cmsBase64: fx.b64('gost256-A-attached.p7s'), digestParameter: 'HASH_GOST3411_2012_512' })).toBe('DIGEST_PARAMETER_ERROR');
    expect(await status({ cmsBase64: fx.b64('rsa-attached.p7s'), digestParameter: 'HASH_GOST3411_94' })).toBe('DIGEST_PARAMETER_ERROR');
  });
  it('flipped GOST signature byte -> INVALID_SIGNATURE_ERROR', async () => {
    const der = fx.bytes('gost512-A-attached.p7s');
    const bad = Uint8Array.from(der);
    bad[bad.length - 5] = (bad[bad.length - 5] ?? 0) ^ 0x01; // inside the signature value at the end
    expect(await status({ cmsBase64: b64(bad) })).toBe('INVALID_SIGNATURE_ERROR');
  });
});

describe('failure statuses', () => {
  it('tampered attached content -> CMS_INVALID_MESSAGE_DIGEST_ATTRIBUTE_ERROR', async () => {
    const r = await run({ cmsBase64: fx.b64('tampered-content.p7s') });
    expect(r.status).toBe('CMS_INVALID_MESSAGE_DIGEST_ATTRIBUTE_ERROR');
    expect(r.signers[0]?.checks.find((c) => c.name === 'MESSAGE_DIGEST')?.ok).toBe(false);
    expect(r.signers[0]?.checks.find((c) => c.name === 'SIGNATURE')?.ok).toBe(true);
  });
  it('detached signature with other data -> CMS_INVALID_MESSAGE_DIGEST_ATTRIBUTE_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('ec256-detached.p7s'), dataBase64: fx.b64('other.txt') })).toBe('CMS_INVALID_MESSAGE_DIGEST_ATTRIBUTE_ERROR');
  });
  it('tampered content without signed attributes -> INVALID_SIGNATURE_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('tampered-content-noattr.p7s') })).toBe('INVALID_SIGNATURE_ERROR');
    expect(await status({ cmsBase64: fx.b64('ec256-noattr-detached.p7s'), dataBase64: fx.b64('other.txt') })).toBe('INVALID_SIGNATURE_ERROR');
  });
  it('tampered signed attribute (signing time) -> INVALID_SIGNATURE_ERROR', async () => {
    const r = await run({ cmsBase64: fx.b64('tampered-attr.p7s') });
    expect(r.status).toBe('INVALID_SIGNATURE_ERROR');
    expect(r.signers[0]?.checks.find((c) => c.name === 'MESSAGE_DIGEST')?.ok).toBe(true);
  });
  it('expired signer certificate -> CERTIFICATE_ERROR', async () => {
    const r = await run({ cmsBase64: fx.b64('expired.p7s') });
    expect(r.status).toBe('CERTIFICATE_ERROR');
    expect(r.signers[0]?.checks.find((c) => c.name === 'SIGNATURE')?.ok).toBe(true);
  });
  it('checkTime before notBefore -> CERTIFICATE_ERROR; far future -> CERTIFICATE_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('rsa-attached.p7s'), checkTime: new Date('2001-01-01T00:00:00Z') })).toBe('CERTIFICATE_ERROR');
    expect(await status({ cmsBase64: fx.b64('rsa-attached.p7s'), checkTime: new Date('2200-01-01T00:00:00Z') })).toBe('CERTIFICATE_ERROR');
  });
  it('expired leaf checked inside its validity while the CA is not yet valid -> CERTIFICATE_CHAIN_VALIDATION_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('expired.p7s'), checkTime: new Date('2020-06-01T00:00:00Z') })).toBe(
      'CERTIFICATE_CHAIN_VALIDATION_ERROR',
    );
  });
  it('untrusted root -> CERTIFICATE_CHAIN_BUILDING_ERROR', async () => {
    const r = await run({ cmsBase64: fx.b64('untrusted.p7s') });
    expect(r.status).toBe('CERTIFICATE_CHAIN_BUILDING_ERROR');
    expect(r.signers[0]?.chain?.subjects).toHaveLength(2);
    // the same message verifies when its root is trusted
    const ok = await verifyCms({ cmsBase64: fx.b64('untrusted.p7s') }, { trustedRoots: [fx.bytes('untrusted-root.der')] });
    expect(ok.status).toBe('VERIFICATION_SUCCESS');
  });
  it('no trusted roots at all -> CERTIFICATE_CHAIN_BUILDING_ERROR', async () => {
    const r = await verifyCms({ cmsBase64: fx.b64('rsa-attached.p7s') }, { trustedRoots: [] });
    expect(r.status).toBe('CERTIFICATE_CHAIN_BUILDING_ERROR');
  });
  it('issuer is not a CA -> CERTIFICATE_CHAIN_VALIDATION_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('notca.p7s') })).toBe('CERTIFICATE_CHAIN_VALIDATION_ERROR');
  });
  it('signer certificate absent -> CMS_NOT_SIGNED_ON_CERTIFICATE_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('nocerts.p7s') })).toBe('CMS_NOT_SIGNED_ON_CERTIFICATE_ERROR');
  });
  it('nested CMS -> CMS_NESTED_NOT_SUPPORTED_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('nested.p7s') })).toBe('CMS_NESTED_NOT_SUPPORTED_ERROR');
  });
  it('data and digested-data content types -> CMS_NOT_SUPPORTED_CONTENT_TYPE_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('data-content.p7') })).toBe('CMS_NOT_SUPPORTED_CONTENT_TYPE_ERROR');
    expect(await status({ cmsBase64: fx.b64('digested-content.p7') })).toBe('CMS_NOT_SUPPORTED_CONTENT_TYPE_ERROR');
  });
  it('certs-only SignedData (no signers) -> CMS_INVALID_CONTENT_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('certs-only.p7'), dataBase64: data })).toBe('CMS_INVALID_CONTENT_ERROR');
  });
  it('attached signature plus data -> NOT_EMPTY_DATA_FOR_ATTACHED_SIGN_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('rsa-attached.p7s'), dataBase64: data })).toBe('NOT_EMPTY_DATA_FOR_ATTACHED_SIGN_ERROR');
  });
  it('detached signature without data -> CMS_NO_DATA_FOR_VERIFY_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('rsa-detached.p7s') })).toBe('CMS_NO_DATA_FOR_VERIFY_ERROR');
    expect(await status({ cmsBase64: fx.b64('rsa-detached.p7s'), dataBase64: '' })).toBe('CMS_NO_DATA_FOR_VERIFY_ERROR');
  });
  it('SHA-224 digest -> NOT_SUPPORTED_ALGORITHM_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('rsa-sha224.p7s') })).toBe('NOT_SUPPORTED_ALGORITHM_ERROR');
  });
  it('ECDSA on secp256k1 -> CMS_UNSUPPORTED_SIGNATURE_TYPE_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('k1-attached.p7s') })).toBe('CMS_UNSUPPORTED_SIGNATURE_TYPE_ERROR');
  });
  it('eContentType differs from the content-type attribute -> CMS_CONTENT_TYPE_OID_DONT_MATCH_ERROR', async () => {
    const der = patchFirst(fx.bytes('rsa-attached.p7s'), OID_BYTES.data, withLastByte(OID_BYTES.data, 0x06));
    expect(await status({ cmsBase64: b64(der) })).toBe('CMS_CONTENT_TYPE_OID_DONT_MATCH_ERROR');
  });
  it('content-type attribute renamed -> CMS_NO_CONTENT_TYPE_ATTRIBUTE_ERROR', async () => {
    const der = patchFirst(fx.bytes('rsa-attached.p7s'), OID_BYTES.contentTypeAttr, withLastByte(OID_BYTES.contentTypeAttr, 0x07));
    expect(await status({ cmsBase64: b64(der) })).toBe('CMS_NO_CONTENT_TYPE_ATTRIBUTE_ERROR');
  });
  it('message-digest attribute renamed -> CMS_NO_MESSAGE_DIGEST_ATTRIBUTE_ERROR', async () => {
    const der = patchFirst(fx.bytes('ec256-attached.p7s'), OID_BYTES.messageDigestAttr, withLastByte(OID_BYTES.messageDigestAttr, 0x07));
    expect(await status({ cmsBase64: b64(der) })).toBe('CMS_NO_MESSAGE_DIGEST_ATTRIBUTE_ERROR');
  });
  it('SignedData version 2 -> CMS_INCORRECT_VERSION_ERROR; SignerInfo version 3 with issuerAndSerial -> CMS_INCORRECT_SIGNER_INFO_VERSION_ERROR', async () => {
    const mutate = (edit: (sd: pkijs.SignedData) => void, version?: number): string => {
      const ci = new pkijs.ContentInfo({ schema: asn1js.fromBER(fx.bytes('rsa-attached.p7s')).result });
      const sd = new pkijs.SignedData({ schema: ci.content });
      edit(sd);
      const schema = sd.toSchema();
      // pkijs recomputes SignedData.version on encoding, so overwrite the INTEGER afterwards
      if (version !== undefined) schema.valueBlock.value[0] = new asn1js.Integer({ value: version });
      const out = new pkijs.ContentInfo({ contentType: ci.contentType, content: schema });
      return b64(new Uint8Array(out.toSchema().toBER(false)));
    };
    expect(await status({ cmsBase64: mutate(() => undefined, 2) })).toBe('CMS_INCORRECT_VERSION_ERROR');
    expect(await status({ cmsBase64: mutate((sd) => { sd.signerInfos[0]!.version = 3; }) })).toBe('CMS_INCORRECT_SIGNER_INFO_VERSION_ERROR');
    // the unmodified round trip still verifies, so the statuses above come from the edits
    expect(await status({ cmsBase64: mutate(() => undefined) })).toBe('VERIFICATION_SUCCESS');
  });
  it('two signers, one broken: overall status is the broken one, the other stays valid', async () => {
    const der = fx.bytes('two-signers.p7s');
    const bad = Uint8Array.from(der);
    bad[bad.length - 3] = (bad[bad.length - 3] ?? 0) ^ 0xff; // last signer's signature value
    const r = await run({ cmsBase64: b64(bad) });
    expect(r.signers.map((s) => s.status)).toEqual(['VERIFICATION_SUCCESS', 'INVALID_SIGNATURE_ERROR']);
    expect(r.status).toBe('INVALID_SIGNATURE_ERROR');
  });
});

describe('bad input never throws', () => {
  it.each([
    ['not base64', 'this is *not* base64!'],
    ['empty', ''],
    ['random bytes', Buffer.from('hello world, not DER').toString('base64')],
    ['a certificate, not CMS', ''],
    ['truncated DER', ''],
    ['trailing garbage', ''],
  ])('%s -> INPUT_DATA_ERROR', async (label, value) => {
    let cms = value;
    if (label === 'a certificate, not CMS') cms = fx.b64('root.der');
    if (label === 'truncated DER') cms = b64(fx.bytes('rsa-attached.p7s').slice(0, 200));
    if (label === 'trailing garbage') cms = b64(new Uint8Array([...fx.bytes('rsa-attached.p7s'), 0, 1, 2]));
    const r = await run({ cmsBase64: cms });
    expect(r.status).toBe('INPUT_DATA_ERROR');
    expect(r.valid).toBe(false);
  });
  it('bad dataBase64 -> INPUT_DATA_ERROR', async () => {
    expect(await status({ cmsBase64: fx.b64('rsa-detached.p7s'), dataBase64: '%%%' })).toBe('INPUT_DATA_ERROR');
  });
  it('accepts PEM armour and line breaks', async () => {
    const pem = `-----BEGIN CMS-----\n${fx.b64('rsa-attached.p7s').replace(/(.{64})/g, '$1\n')}\n-----END CMS-----\n`;
    expect(await status({ cmsBase64: pem })).toBe('VERIFICATION_SUCCESS');
  });
});
