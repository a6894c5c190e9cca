/**
 * Certificate path building and validation for the CMS verifier.
 * Intermediates come from the CMS certificates, anchors from the trusted roots. A path is
 * "built" when it reaches a trusted root; it is "valid" when every link's signature verifies,
 * every issuer is a CA (basicConstraints cA, keyCertSign when keyUsage is present) and every
 * issuer certificate is within its validity period at the check time. The leaf's own validity is
 * the separate CERTIFICATE_VALIDITY check.
 */
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { describeName } from './names.js';

export interface ParsedCert {
  cert: pkijs.Certificate;
  der: Uint8Array;
  /** hex of the DER, used as identity */
  key: string;
  subjectKey: string;
  issuerKey: string;
}

export interface ChainResult {
  status: 'OK' | 'CERTIFICATE_CHAIN_BUILDING_ERROR' | 'CERTIFICATE_CHAIN_VALIDATION_ERROR';
  message: string;
  /** subjects (RFC 4514) from the signer up to the root, as far as the path was built */
  subjects: string[];
}

const MAX_DEPTH = 10;

function hex(b: Uint8Array | ArrayBuffer): string {
  return Buffer.from(b instanceof Uint8Array ? b : new Uint8Array(b)).toString('hex');
}

function nameKey(name: pkijs.RelativeDistinguishedNames): string {
  return hex(name.valueBeforeDecode.byteLength ? name.valueBeforeDecode : name.toSchema().toBER(false));
}

/** Wrap a parsed certificate with identity keys. */
export function toParsedCert(cert: pkijs.Certificate, der?: Uint8Array): ParsedCert {
  const raw = der ?? new Uint8Array(cert.toSchema(true).toBER(false));
  return { cert, der: raw, key: hex(raw), subjectKey: nameKey(cert.subject), issuerKey: nameKey(cert.issuer) };
}

/** Parse DER certificates; throws on malformed input. */
export function parseCertificate(der: Uint8Array): ParsedCert {
  const asn = asn1js.fromBER(der);
  if (asn.offset === -1) throw new Error('certificate is not valid DER');
  return toParsedCert(new pkijs.Certificate({ schema: asn.result }), der);
}

function isCa(cert: pkijs.Certificate): { ok: boolean; why?: string } {
  const ext = cert.extensions ?? [];
  const bc = ext.find((e) => e.extnID === '2.5.29.19');
  const ku = ext.find((e) => e.extnID === '2.5.29.15');
  if (cert.version >= 2) {
    if (!bc || !(bc.parsedValue instanceof pkijs.BasicConstraints) || !bc.parsedValue.cA) {
      return { ok: false, why: 'is not a CA (basicConstraints cA is not set)' };
    }
  }
  if (ku && ku.parsedValue instanceof asn1js.BitString) {
    const bits = ku.parsedValue.valueBlock.valueHexView;
    // keyCertSign is bit 5 of the first byte
    if (((bits[0] ?? 0) & 0x04) === 0) return { ok: false, why: 'keyUsage lacks keyCertSign' };
  }
  return { ok: true };
}

function withinValidity(cert: pkijs.Certificate, at: Date): boolean {
  return cert.notBefore.value.getTime() <= at.getTime() && at.getTime() <= cert.notAfter.value.getTime();
}

/** Memoised "child is signed by issuer" checks within one verification run. */
export class SignatureCache {
  private readonly cache = new Map<string, Promise<boolean>>();
  verify(child: ParsedCert, issuer: ParsedCert): Promise<boolean> {
    const k = `${child.key}|${issuer.key}`;
    let p = this.cache.get(k);
    if (!p) {
      p = child.cert.verify(issuer.cert).catch(() => false);
      this.cache.set(k, p);
    }
    return p;
  }
}

/** Build and validate the path from `leaf` to one of `roots`. */
export async function buildChain(
  leaf: ParsedCert,
  intermediates: readonly ParsedCert[],
  roots: readonly ParsedCert[],
  at: Date,
  sigCache: SignatureCache,
): Promise<ChainResult> {
  const subjects = [describeName(leaf.cert.subject).rdn];
  const rootKeys = new Set(roots.map((r) => r.key));
  let current = leaf;
  const used = new Set([leaf.key]);
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    if (rootKeys.has(current.key)) return { status: 'OK', message: 'chain ends at a trusted root', subjects };
    const rootCandidates = roots.filter((r) => r.subjectKey === current.issuerKey);
    const interCandidates = intermediates.filter((c) => c.subjectKey === current.issuerKey && !used.has(c.key) && !rootKeys.has(c.key));
    const candidates = [...rootCandidates, ...interCandidates];
    if (candidates.length === 0) {
      const selfSigned = current.subjectKey === current.issuerKey;
      return {
        status: 'CERTIFICATE_CHAIN_BUILDING_ERROR',
        message: selfSigned
          ? `chain ends at the self-signed certificate "${describeName(current.cert.subject).rdn}", which is not a trusted root`
          : `issuer "${describeName(current.cert.issuer).rdn}" of "${describeName(current.cert.subject).rdn}" is neither a trusted root nor among the CMS certificates`,
        subjects,
      };
    }
    let issuer: ParsedCert | undefined;
    for (const c of candidates) {
      if (await sigCache.verify(current, c)) {
        issuer = c;
        break;
      }
    }
    if (!issuer) {
      return {
        status: 'CERTIFICATE_CHAIN_VALIDATION_ERROR',
        message: `signature of "${describeName(current.cert.subject).rdn}" does not verify with the key of its issuer`,
        subjects,
      };
    }
    const issuerName = describeName(issuer.cert.subject).rdn;
    if (issuer.key !== current.key) subjects.push(issuerName);
    const ca = isCa(issuer.cert);
    if (!ca.ok) return { status: 'CERTIFICATE_CHAIN_VALIDATION_ERROR', message: `issuer "${issuerName}" ${ca.why}`, subjects };
    if (!withinValidity(issuer.cert, at)) {
      return { status: 'CERTIFICATE_CHAIN_VALIDATION_ERROR', message: `issuer "${issuerName}" is not valid at ${at.toISOString()}`, subjects };
    }
    if (rootKeys.has(issuer.key)) return { status: 'OK', message: 'chain ends at a trusted root', subjects };
    used.add(issuer.key);
    current = issuer;
  }
  return { status: 'CERTIFICATE_CHAIN_BUILDING_ERROR', message: `no trusted root within ${MAX_DEPTH} certificates`, subjects };
}
