/**
 * CMS (RFC 5652) SignedData verification: the domain core of the signature-verification area.
 * No HTTP, GraphQL or database here. Malformed input yields INPUT_DATA_ERROR, never an exception.
 *
 * Precedence: message-level errors stop early, in this order: INPUT_DATA_ERROR (base64/DER),
 * CMS_NOT_SUPPORTED_CONTENT_TYPE_ERROR, CMS_INCORRECT_VERSION_ERROR, CMS_NESTED_NOT_SUPPORTED_ERROR,
 * NOT_EMPTY_DATA_FOR_ATTACHED_SIGN_ERROR, CMS_NO_DATA_FOR_VERIFY_ERROR, CMS_INVALID_CONTENT_ERROR
 * (no signers). Then every signer is checked completely and the overall status is the failure
 * ranked first in SIGNER_STATUS_PRECEDENCE (statuses.ts) over all signers; ties go to the first
 * signer. No failure: VERIFICATION_SUCCESS.
 */
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { buildChain, parseCertificate, SignatureCache, toParsedCert, type ParsedCert } from './chain.js';
import { GostKeyError, installGostEngine } from './gost-engine.js';
import { describeName, type CertificateName } from './names.js';
import { DIGEST_BY_OID, DIGEST_NAME, GOST_KEY_OIDS, OID, nameOfOid, type DigestName } from './oids.js';
import { SIGNER_STATUS_PRECEDENCE, type CheckName, type SignatureStatus, type SignerFailureStatus } from './statuses.js';

export type DigestParameter = 'HASH_GOST3411_94' | 'HASH_GOST3411_2012_256' | 'HASH_GOST3411_2012_512';

export interface CmsVerificationInput {
  /** DER CMS ContentInfo (SignedData), base64; whitespace and PEM armour are tolerated. */
  cmsBase64: string;
  /** The signed content for a detached signature, base64. Must be absent/empty for attached ones. */
  dataBase64?: string;
  /** Time at which certificates must be valid; default: now. */
  checkTime?: Date;
  /** When set, every signer's digest algorithm must be this one. */
  digestParameter?: DigestParameter;
  /** When true, the report carries the signed content (base64) in `signedData`. */
  needSignedData?: boolean;
}

export interface CmsVerificationOptions {
  /** DER certificates of the trust anchors. Parsed once per array (cached by identity). */
  trustedRoots: Uint8Array[];
}

export interface AlgorithmInfo {
  oid: string;
  name: string;
}

export interface SignerCheck {
  name: CheckName;
  ok: boolean;
  /** the status this check contributes when it fails (VERIFICATION_SUCCESS when ok) */
  status: SignatureStatus;
  message: string;
}

export interface SignerChain {
  ok: boolean;
  status: SignatureStatus;
  message: string;
  /** RFC 4514 subjects from the signer certificate up to the trust anchor (as far as built) */
  subjects: string[];
}

export interface SignerReport {
  index: number;
  status: SignatureStatus;
  message: string;
  subject: CertificateName | null;
  issuer: CertificateName | null;
  /** hex, lower case, as encoded (sid serial when the certificate is missing) */
  serialNumber: string | null;
  notBefore: string | null;
  notAfter: string | null;
  signingTime: string | null;
  digestAlgorithm: AlgorithmInfo;
  signatureAlgorithm: AlgorithmInfo;
  checks: SignerCheck[];
  chain: SignerChain | null;
}

export interface CmsVerificationReport {
  status: SignatureStatus;
  /** true only for VERIFICATION_SUCCESS */
  valid: boolean;
  message: string;
  /** eContentType OID when the SignedData could be read */
  contentType: string | null;
  detached: boolean | null;
  /** base64 of the signed content, only when needSignedData */
  signedData?: string;
  signers: SignerReport[];
}

const DIGEST_FOR_PARAMETER: Readonly<Record<DigestParameter, DigestName>> = {
  HASH_GOST3411_94: DIGEST_NAME.GOST94,
  HASH_GOST3411_2012_256: DIGEST_NAME.STREEBOG256,
  HASH_GOST3411_2012_512: DIGEST_NAME.STREEBOG512,
};

const WEBCRYPTO_CURVES = new Set(['1.2.840.10045.3.1.7', '1.3.132.0.34', '1.3.132.0.35']);

const engine = installGostEngine();

function failure(status: SignatureStatus, message: string, extra: Partial<CmsVerificationReport> = {}): CmsVerificationReport {
  return { status, valid: false, message, contentType: null, detached: null, signers: [], ...extra };
}

/** Strict base64 (standard alphabet, padding optional); PEM armour lines and whitespace removed. */
function decodeBase64(text: string): Uint8Array | null {
  const body = text.replace(/-----(BEGIN|END)[^-]*-----/g, '').replace(/\s+/g, '');
  if (body.length === 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length % 4 === 1) return null;
  return new Uint8Array(Buffer.from(body, 'base64'));
}

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

function octets(os: asn1js.OctetString): Uint8Array {
  if (!os.idBlock.isConstructed) return os.valueBlock.valueHexView;
  const parts: Uint8Array[] = [];
  for (const inner of os.valueBlock.value) if (inner instanceof asn1js.OctetString) parts.push(octets(inner));
  return new Uint8Array(Buffer.concat(parts));
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a).equals(Buffer.from(b));
}

const rootCache = new WeakMap<Uint8Array[], ParsedCert[]>();

function trustedRoots(list: Uint8Array[]): ParsedCert[] {
  let parsed = rootCache.get(list);
  if (!parsed) {
    parsed = [];
    for (const der of list) {
      try {
        parsed.push(parseCertificate(der));
      } catch {
        // an unreadable anchor is ignored; chains through it cannot be built
      }
    }
    rootCache.set(list, parsed);
  }
  return parsed;
}

function findSignerCert(sid: pkijs.SignerInfo['sid'], certs: readonly ParsedCert[]): ParsedCert | undefined {
  if (sid instanceof pkijs.IssuerAndSerialNumber) {
    const serial = sid.serialNumber.valueBlock.valueHexView;
    return certs.find(
      (c) => equalBytes(c.cert.serialNumber.valueBlock.valueHexView, serial) && c.cert.issuer.isEqual(sid.issuer),
    );
  }
  // [0] SubjectKeyIdentifier
  const ski = sid instanceof asn1js.Constructed || sid instanceof asn1js.Primitive ? (sid as asn1js.Primitive).valueBlock.valueHexView : undefined;
  if (!ski) return undefined;
  return certs.find((c) => {
    const ext = c.cert.extensions?.find((e) => e.extnID === '2.5.29.14');
    return ext?.parsedValue instanceof asn1js.OctetString && equalBytes(ext.parsedValue.valueBlock.valueHexView, ski);
  });
}

function attribute(si: pkijs.SignerInfo, oid: string): pkijs.Attribute[] {
  return (si.signedAttrs?.attributes ?? []).filter((a) => a.type === oid);
}

function readSigningTime(si: pkijs.SignerInfo): string | null {
  const v = attribute(si, OID.signingTime)[0]?.values[0];
  if (v instanceof asn1js.UTCTime || v instanceof asn1js.GeneralizedTime) return v.toDate().toISOString();
  return null;
}

type SignerGate = { status: SignerFailureStatus; message: string } | null;

function keyGate(cert: pkijs.Certificate, digest: DigestName | undefined, signatureOid: string): SignerGate {
  const keyOid = cert.subjectPublicKeyInfo.algorithm.algorithmId;
  if (GOST_KEY_OIDS.has(keyOid)) {
    const gostDigests: readonly string[] = [DIGEST_NAME.GOST94, DIGEST_NAME.STREEBOG256, DIGEST_NAME.STREEBOG512];
    if (digest && !gostDigests.includes(digest)) {
      return { status: 'CMS_UNSUPPORTED_SIGNATURE_TYPE_ERROR', message: `GOST key used with non-GOST digest ${digest}` };
    }
    return null;
  }
  if (keyOid === OID.rsaEncryption || keyOid === OID.rsaPss) return null;
  if (keyOid === OID.ecPublicKey) {
    const p = cert.subjectPublicKeyInfo.algorithm.algorithmParams;
    const curve = p instanceof asn1js.ObjectIdentifier ? p.valueBlock.toString() : '';
    if (WEBCRYPTO_CURVES.has(curve)) return null;
    return { status: 'CMS_UNSUPPORTED_SIGNATURE_TYPE_ERROR', message: `EC curve ${curve || '(explicit parameters)'} is not supported` };
  }
  return {
    status: 'CMS_UNSUPPORTED_SIGNATURE_TYPE_ERROR',
    message: `public key algorithm ${nameOfOid(keyOid)} (${keyOid}) with signature ${nameOfOid(signatureOid)} is not supported`,
  };
}

interface SignerContext {
  content: Uint8Array;
  eContentType: string;
  digestAlgorithmsListed: ReadonlySet<string>;
  certs: readonly ParsedCert[];
  roots: readonly ParsedCert[];
  at: Date;
  digestParameter: DigestParameter | undefined;
  sigCache: SignatureCache;
  digestCache: Map<string, Promise<Uint8Array>>;
}

function contentDigest(ctx: SignerContext, name: DigestName): Promise<Uint8Array> {
  let p = ctx.digestCache.get(name);
  if (!p) {
    p = engine.digest({ name }, ctx.content as Uint8Array<ArrayBuffer>).then((b) => new Uint8Array(b));
    ctx.digestCache.set(name, p);
  }
  return p;
}

async function verifySigner(si: pkijs.SignerInfo, index: number, ctx: SignerContext): Promise<SignerReport> {
  const digestOid = si.digestAlgorithm.algorithmId;
  const signatureOid = si.signatureAlgorithm.algorithmId;
  const report: SignerReport = {
    index,
    status: 'VERIFICATION_SUCCESS',
    message: 'signature is valid',
    subject: null,
    issuer: null,
    serialNumber: si.sid instanceof pkijs.IssuerAndSerialNumber ? hex(si.sid.serialNumber.valueBlock.valueHexView) : null,
    notBefore: null,
    notAfter: null,
    signingTime: readSigningTime(si),
    digestAlgorithm: { oid: digestOid, name: nameOfOid(digestOid) },
    signatureAlgorithm: { oid: signatureOid, name: nameOfOid(signatureOid) },
    checks: [],
    chain: null,
  };
  const failures: { status: SignerFailureStatus; message: string }[] = [];
  const fail = (status: SignerFailureStatus, message: string): void => void failures.push({ status, message });
  const check = (name: CheckName, status: SignerFailureStatus, ok: boolean, message: string): void => {
    report.checks.push({ name, ok, status: ok ? 'VERIFICATION_SUCCESS' : status, message });
    if (!ok) fail(status, message);
  };

  const sidIsIssuerSerial = si.sid instanceof pkijs.IssuerAndSerialNumber;
  if ((si.version === 1 && !sidIsIssuerSerial) || (si.version === 3 && sidIsIssuerSerial) || (si.version !== 1 && si.version !== 3)) {
    fail('CMS_INCORRECT_SIGNER_INFO_VERSION_ERROR', `SignerInfo version ${si.version} does not match its signer identifier`);
  }

  const signer = findSignerCert(si.sid, ctx.certs);
  if (signer) {
    report.subject = describeName(signer.cert.subject);
    report.issuer = describeName(signer.cert.issuer);
    report.serialNumber = hex(signer.cert.serialNumber.valueBlock.valueHexView);
    report.notBefore = signer.cert.notBefore.value.toISOString();
    report.notAfter = signer.cert.notAfter.value.toISOString();
  } else {
    fail('CMS_NOT_SIGNED_ON_CERTIFICATE_ERROR', 'the signer certificate is not among the CMS certificates');
  }

  const digestName = DIGEST_BY_OID[digestOid];
  if (!digestName) fail('NOT_SUPPORTED_ALGORITHM_ERROR', `digest algorithm ${digestOid} is not supported`);
  if (!ctx.digestAlgorithmsListed.has(digestOid)) {
    fail('CMS_UNEXPECTED_DIGEST_ALGORITHM_ERROR', `digest algorithm ${digestOid} is not listed in SignedData.digestAlgorithms`);
  }
  if (ctx.digestParameter && digestName !== DIGEST_FOR_PARAMETER[ctx.digestParameter]) {
    fail('DIGEST_PARAMETER_ERROR', `signer uses ${nameOfOid(digestOid)}, the request demands ${ctx.digestParameter}`);
  }
  const gate = signer ? keyGate(signer.cert, digestName, signatureOid) : null;
  if (gate) fail(gate.status, gate.message);

  // signed attributes
  let toVerify: Uint8Array = ctx.content;
  const digest = digestName ? await contentDigest(ctx, digestName) : undefined;
  if (si.signedAttrs) {
    const ct = attribute(si, OID.contentType);
    const ctValue = ct[0]?.values[0];
    if (ct.length !== 1 || !(ctValue instanceof asn1js.ObjectIdentifier)) {
      fail('CMS_NO_CONTENT_TYPE_ATTRIBUTE_ERROR', 'signed attributes carry no (single) content-type attribute');
    } else if (ctValue.valueBlock.toString() !== ctx.eContentType) {
      fail('CMS_CONTENT_TYPE_OID_DONT_MATCH_ERROR', `content-type attribute ${ctValue.valueBlock.toString()} differs from eContentType ${ctx.eContentType}`);
    }
    const md = attribute(si, OID.messageDigest);
    const mdValue = md[0]?.values[0];
    if (md.length !== 1 || !(mdValue instanceof asn1js.OctetString)) {
      fail('CMS_NO_MESSAGE_DIGEST_ATTRIBUTE_ERROR', 'signed attributes carry no (single) message-digest attribute');
      report.checks.push({ name: 'MESSAGE_DIGEST', ok: false, status: 'CMS_NO_MESSAGE_DIGEST_ATTRIBUTE_ERROR', message: 'message-digest attribute missing' });
    } else if (digest) {
      const ok = equalBytes(mdValue.valueBlock.valueHexView, digest);
      check('MESSAGE_DIGEST', 'CMS_INVALID_MESSAGE_DIGEST_ATTRIBUTE_ERROR', ok,
        ok ? 'message-digest attribute matches the content' : 'message-digest attribute does not match the content');
    }
    const raw = new Uint8Array(si.signedAttrs.encodedValue.slice(0));
    raw[0] = 0x31; // DER of SET OF, not the [0] IMPLICIT tag
    toVerify = raw;
  } else {
    if (ctx.eContentType !== OID.data) {
      fail('CMS_NO_CONTENT_TYPE_ATTRIBUTE_ERROR', 'signed attributes are required when eContentType is not id-data');
    }
    report.checks.push({ name: 'MESSAGE_DIGEST', ok: true, status: 'VERIFICATION_SUCCESS', message: 'no signed attributes: the signature covers the content directly' });
  }

  if (signer && digestName && !gate) {
    let ok = false;
    let message = 'signature value is valid';
    try {
      ok = await engine.verifyWithPublicKey(toVerify as Uint8Array<ArrayBuffer>, si.signature, signer.cert.subjectPublicKeyInfo, si.signatureAlgorithm, digestName);
      if (!ok) message = 'signature value does not match';
    } catch (e) {
      ok = false;
      message = e instanceof GostKeyError ? `unusable public key: ${e.message}` : `signature could not be checked: ${(e as Error).message}`;
    }
    check('SIGNATURE', 'INVALID_SIGNATURE_ERROR', ok, message);
  }

  if (signer) {
    const c = signer.cert;
    const at = ctx.at.getTime();
    const inRange = c.notBefore.value.getTime() <= at && at <= c.notAfter.value.getTime();
    check('CERTIFICATE_VALIDITY', 'CERTIFICATE_ERROR', inRange, inRange
      ? `certificate valid at ${ctx.at.toISOString()}`
      : at < c.notBefore.value.getTime()
        ? `certificate is not yet valid at ${ctx.at.toISOString()} (notBefore ${report.notBefore})`
        : `certificate expired at ${ctx.at.toISOString()} (notAfter ${report.notAfter})`);
    const chain = await buildChain(signer, ctx.certs, ctx.roots, ctx.at, ctx.sigCache);
    if (chain.status === 'OK') {
      report.chain = { ok: true, status: 'CERTIFICATE_CHAIN_IS_VALID', message: chain.message, subjects: chain.subjects };
      check('CHAIN', 'CERTIFICATE_CHAIN_BUILDING_ERROR', true, chain.message);
    } else {
      report.chain = { ok: false, status: chain.status, message: chain.message, subjects: chain.subjects };
      check('CHAIN', chain.status, false, chain.message);
    }
  }

  const first = failures.sort((a, b) => SIGNER_STATUS_PRECEDENCE.indexOf(a.status) - SIGNER_STATUS_PRECEDENCE.indexOf(b.status))[0];
  if (first) {
    report.status = first.status;
    report.message = first.message;
  }
  return report;
}

/**
 * The certificates of a SignedData as received (the DER of each CertificateChoices element, in order), so
 * that they need not be re-encoded from the parsed objects; null when the field cannot be located.
 */
function certificateEncodings(signedData: unknown): Uint8Array[] | null {
  if (!(signedData instanceof asn1js.Sequence)) return null;
  const field = signedData.valueBlock.value.find((b) => b.idBlock.tagClass === 3 && b.idBlock.tagNumber === 0);
  if (!(field instanceof asn1js.Constructed)) return null;
  return field.valueBlock.value.map((b) => new Uint8Array(b.valueBeforeDecodeView));
}

/** Verify a CMS SignedData. Never throws for bad input; the status says what is wrong. */
export async function verifyCms(input: CmsVerificationInput, options: CmsVerificationOptions): Promise<CmsVerificationReport> {
  try {
    return await verifyCmsUnsafe(input, options);
  } catch (e) {
    return failure('INPUT_DATA_ERROR', `the CMS message could not be processed: ${(e as Error).message}`);
  }
}

async function verifyCmsUnsafe(input: CmsVerificationInput, options: CmsVerificationOptions): Promise<CmsVerificationReport> {
  const cmsDer = typeof input.cmsBase64 === 'string' ? decodeBase64(input.cmsBase64) : null;
  if (!cmsDer) return failure('INPUT_DATA_ERROR', 'cmsBase64 is empty or not valid base64');
  let data: Uint8Array | undefined;
  if (input.dataBase64 !== undefined && input.dataBase64 !== '') {
    const d = decodeBase64(input.dataBase64);
    if (!d) return failure('INPUT_DATA_ERROR', 'dataBase64 is not valid base64');
    data = d;
  }
  const at = input.checkTime ?? new Date();
  if (Number.isNaN(at.getTime())) return failure('INPUT_DATA_ERROR', 'checkTime is not a valid date');

  const asn = asn1js.fromBER(cmsDer);
  if (asn.offset === -1 || asn.offset !== cmsDer.byteLength) return failure('INPUT_DATA_ERROR', 'cmsBase64 is not a single DER/BER value');
  let contentInfo: pkijs.ContentInfo;
  try {
    contentInfo = new pkijs.ContentInfo({ schema: asn.result });
  } catch {
    return failure('INPUT_DATA_ERROR', 'cmsBase64 is not a CMS ContentInfo');
  }
  if (contentInfo.contentType !== OID.signedData) {
    return failure('CMS_NOT_SUPPORTED_CONTENT_TYPE_ERROR', `content type ${nameOfOid(contentInfo.contentType)} is not signedData`, {
      contentType: contentInfo.contentType,
    });
  }
  let sd: pkijs.SignedData;
  try {
    sd = new pkijs.SignedData({ schema: contentInfo.content });
  } catch {
    return failure('INPUT_DATA_ERROR', 'the SignedData structure is malformed');
  }
  const eContentType = sd.encapContentInfo.eContentType;
  const eContent = sd.encapContentInfo.eContent;
  const detached = !eContent;
  const base = { contentType: eContentType, detached };
  if (![1, 3, 4, 5].includes(sd.version)) {
    return failure('CMS_INCORRECT_VERSION_ERROR', `SignedData version ${sd.version} is not 1, 3, 4 or 5`, base);
  }
  if (eContentType === OID.signedData) {
    return failure('CMS_NESTED_NOT_SUPPORTED_ERROR', 'the signed content is itself a SignedData (nested CMS)', base);
  }
  let content: Uint8Array;
  if (eContent) {
    if (data) return failure('NOT_EMPTY_DATA_FOR_ATTACHED_SIGN_ERROR', 'dataBase64 must be empty for an attached signature', base);
    content = octets(eContent);
  } else {
    if (!data) return failure('CMS_NO_DATA_FOR_VERIFY_ERROR', 'detached signature: dataBase64 is required', base);
    content = data;
  }
  if (sd.signerInfos.length === 0) return failure('CMS_INVALID_CONTENT_ERROR', 'the SignedData has no signers', base);

  const certs: ParsedCert[] = [];
  const received = certificateEncodings(contentInfo.content);
  for (const [i, c] of (sd.certificates ?? []).entries()) {
    if (c instanceof pkijs.Certificate) certs.push(toParsedCert(c, received?.[i]));
  }
  const ctx: SignerContext = {
    content,
    eContentType,
    digestAlgorithmsListed: new Set(sd.digestAlgorithms.map((a) => a.algorithmId)),
    certs,
    roots: trustedRoots(options.trustedRoots),
    at,
    digestParameter: input.digestParameter,
    sigCache: new SignatureCache(),
    digestCache: new Map(),
  };
  const signers: SignerReport[] = [];
  for (const [i, si] of sd.signerInfos.entries()) signers.push(await verifySigner(si, i, ctx));

  let worst: SignerReport | undefined;
  const rank = (s: SignatureStatus): number => SIGNER_STATUS_PRECEDENCE.indexOf(s as SignerFailureStatus);
  for (const s of signers) {
    if (s.status === 'VERIFICATION_SUCCESS') continue;
    if (!worst || rank(s.status) < rank(worst.status)) worst = s;
  }
  const report: CmsVerificationReport = worst
    ? { status: worst.status, valid: false, message: `signer ${worst.index}: ${worst.message}`, ...base, signers }
    : { status: 'VERIFICATION_SUCCESS', valid: true, message: `${signers.length} signature(s) valid`, ...base, signers };
  if (input.needSignedData) report.signedData = Buffer.from(content).toString('base64');
  return report;
}
