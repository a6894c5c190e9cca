/** Object identifiers used by the CMS verifier, with display names. */

export const OID = {
  // content types (RFC 5652)
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  envelopedData: '1.2.840.113549.1.7.3',
  digestedData: '1.2.840.113549.1.7.5',
  encryptedData: '1.2.840.113549.1.7.6',
  authData: '1.2.840.113549.1.9.16.1.2',
  // signed attributes
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  // digests
  sha1: '1.3.14.3.2.26',
  sha224: '2.16.840.1.101.3.4.2.4',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  gost94: '1.2.643.2.2.9',
  streebog256: '1.2.643.7.1.1.2.2',
  streebog512: '1.2.643.7.1.1.2.3',
  // public keys
  rsaEncryption: '1.2.840.113549.1.1.1',
  rsaPss: '1.2.840.113549.1.1.10',
  ecPublicKey: '1.2.840.10045.2.1',
  gost2001: '1.2.643.2.2.19',
  gost2012_256: '1.2.643.7.1.1.1.1',
  gost2012_512: '1.2.643.7.1.1.1.2',
  // signature algorithms
  sha1WithRsa: '1.2.840.113549.1.1.5',
  sha224WithRsa: '1.2.840.113549.1.1.14',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  sha384WithRsa: '1.2.840.113549.1.1.12',
  sha512WithRsa: '1.2.840.113549.1.1.13',
  ecdsaWithSha1: '1.2.840.10045.4.1',
  ecdsaWithSha224: '1.2.840.10045.4.3.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  ecdsaWithSha384: '1.2.840.10045.4.3.3',
  ecdsaWithSha512: '1.2.840.10045.4.3.4',
  gost94With2001: '1.2.643.2.2.3',
  streebog256With2012: '1.2.643.7.1.1.3.2',
  streebog512With2012: '1.2.643.7.1.1.3.3',
} as const;

/** Digest names used with the crypto engine (WebCrypto names plus our GOST names). */
export const DIGEST_NAME = {
  SHA1: 'SHA-1',
  SHA256: 'SHA-256',
  SHA384: 'SHA-384',
  SHA512: 'SHA-512',
  GOST94: 'GOST R 34.11-94',
  STREEBOG256: 'GOST R 34.11-2012-256',
  STREEBOG512: 'GOST R 34.11-2012-512',
} as const;

export type DigestName = (typeof DIGEST_NAME)[keyof typeof DIGEST_NAME];

/** Digest OID -> digest name. SHA-224 is absent on purpose: WebCrypto has no SHA-224. */
export const DIGEST_BY_OID: Readonly<Record<string, DigestName>> = {
  [OID.sha1]: DIGEST_NAME.SHA1,
  [OID.sha256]: DIGEST_NAME.SHA256,
  [OID.sha384]: DIGEST_NAME.SHA384,
  [OID.sha512]: DIGEST_NAME.SHA512,
  [OID.gost94]: DIGEST_NAME.GOST94,
  [OID.streebog256]: DIGEST_NAME.STREEBOG256,
  [OID.streebog512]: DIGEST_NAME.STREEBOG512,
};

/** The digest that each GOST key or signature OID implies (what OpenSSL writes in SignerInfo). */
export const GOST_HASH_BY_OID: Readonly<Record<string, DigestName>> = {
  [OID.gost2001]: DIGEST_NAME.GOST94,
  [OID.gost94With2001]: DIGEST_NAME.GOST94,
  [OID.gost2012_256]: DIGEST_NAME.STREEBOG256,
  [OID.streebog256With2012]: DIGEST_NAME.STREEBOG256,
  [OID.gost2012_512]: DIGEST_NAME.STREEBOG512,
  [OID.streebog512With2012]: DIGEST_NAME.STREEBOG512,
};

export const GOST_KEY_OIDS: ReadonlySet<string> = new Set([OID.gost2001, OID.gost2012_256, OID.gost2012_512]);

const NAMES: Readonly<Record<string, string>> = {
  [OID.sha1]: 'SHA-1',
  [OID.sha224]: 'SHA-224',
  [OID.sha256]: 'SHA-256',
  [OID.sha384]: 'SHA-384',
  [OID.sha512]: 'SHA-512',
  [OID.gost94]: 'GOST R 34.11-94',
  [OID.streebog256]: 'GOST R 34.11-2012 256',
  [OID.streebog512]: 'GOST R 34.11-2012 512',
  [OID.rsaEncryption]: 'RSA',
  [OID.rsaPss]: 'RSASSA-PSS',
  [OID.ecPublicKey]: 'EC',
  [OID.gost2001]: 'GOST R 34.10-2001',
  [OID.gost2012_256]: 'GOST R 34.10-2012 256',
  [OID.gost2012_512]: 'GOST R 34.10-2012 512',
  [OID.sha1WithRsa]: 'SHA-1 with RSA',
  [OID.sha224WithRsa]: 'SHA-224 with RSA',
  [OID.sha256WithRsa]: 'SHA-256 with RSA',
  [OID.sha384WithRsa]: 'SHA-384 with RSA',
  [OID.sha512WithRsa]: 'SHA-512 with RSA',
  [OID.ecdsaWithSha1]: 'ECDSA with SHA-1',
  [OID.ecdsaWithSha224]: 'ECDSA with SHA-224',
  [OID.ecdsaWithSha256]: 'ECDSA with SHA-256',
  [OID.ecdsaWithSha384]: 'ECDSA with SHA-384',
  [OID.ecdsaWithSha512]: 'ECDSA with SHA-512',
  [OID.gost94With2001]: 'GOST R 34.11-94 with GOST R 34.10-2001',
  [OID.streebog256With2012]: 'GOST R 34.11-2012 with GOST R 34.10-2012 256',
  [OID.streebog512With2012]: 'GOST R 34.11-2012 with GOST R 34.10-2012 512',
  [OID.data]: 'data',
  [OID.signedData]: 'signedData',
  [OID.envelopedData]: 'envelopedData',
  [OID.digestedData]: 'digestedData',
  [OID.encryptedData]: 'encryptedData',
  [OID.authData]: 'authData',
};

/** A human name for an OID, or the OID itself when unknown. */
export function nameOfOid(oid: string): string {
  return NAMES[oid] ?? oid;
}
