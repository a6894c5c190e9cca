/**
 * A pkijs CryptoEngine that adds GOST to WebCrypto: Streebog-256/512 and GOST R 34.11-94 digests
 * and GOST R 34.10-2001 / 2012 (256 and 512) signature verification. Everything else (RSA,
 * RSA-PSS, ECDSA) is delegated to the WebCrypto-backed base engine.
 *
 * Wire facts (as written by OpenSSL's gost engine and by CryptoPro):
 * - SignerInfo.signatureAlgorithm may hold the key OID (1.2.643.7.1.1.1.1/.2, 1.2.643.2.2.19);
 *   certificates use 1.2.643.7.1.1.3.2/.3.3 and 1.2.643.2.2.3.
 * - The public key is an OCTET STRING inside the BIT STRING: x || y, each little-endian.
 * - The signature is s || r, each big-endian; the digest is read as a little-endian integer.
 * - The curve is the first OID of the key parameters SEQUENCE.
 */
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { gostCurveByOid } from './gost-curves.js';
import { gost94 } from './gost94.js';
import { DIGEST_BY_OID, DIGEST_NAME, GOST_HASH_BY_OID, GOST_KEY_OIDS } from './oids.js';
import { streebog256, streebog512 } from './streebog.js';

const GOST_DIGESTS: Readonly<Record<string, (d: Uint8Array) => Uint8Array>> = {
  [DIGEST_NAME.GOST94]: (d) => gost94(d),
  [DIGEST_NAME.STREEBOG256]: streebog256,
  [DIGEST_NAME.STREEBOG512]: streebog512,
};

function toBytes(data: BufferSource): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

function algorithmName(algorithm: AlgorithmIdentifier): string {
  return typeof algorithm === 'string' ? algorithm : algorithm.name;
}

function bytesToBigIntBE(b: Uint8Array): bigint {
  let hex = '';
  for (const x of b) hex += x.toString(16).padStart(2, '0');
  return hex === '' ? 0n : BigInt(`0x${hex}`);
}

function bytesToBigIntLE(b: Uint8Array): bigint {
  return bytesToBigIntBE(Uint8Array.from(b).reverse());
}

function mod(a: bigint, m: bigint): bigint {
  const r = a % m;
  return r < 0n ? r + m : r;
}

function invert(a: bigint, m: bigint): bigint {
  let [oldR, r] = [mod(a, m), m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return mod(oldS, m);
}

/** Thrown for GOST keys or parameters this engine cannot handle (unknown curve, bad encoding). */
export class GostKeyError extends Error {
  override name = 'GostKeyError';
}

type GostPoint = ReturnType<NonNullable<ReturnType<typeof gostCurveByOid>>['Point']['fromAffine']>;

/** Validated public points by curve and key bytes, most recently used last (bounded). */
const POINT_CACHE_SIZE = 256;
const pointCache = new Map<string, { point: GostPoint; uses: number }>();

/**
 * The key's point, validated once. A key seen a second time (a CA or trust anchor checking certificate
 * links, a signer signing again) gets a wNAF table (window 6), so later Q multiplications cost a few
 * table additions instead of a full double-and-add walk.
 */
function publicPoint(curve: NonNullable<ReturnType<typeof gostCurveByOid>>, curveOid: string, raw: Uint8Array): GostPoint {
  const key = `${curveOid}:${Buffer.from(raw).toString('hex')}`;
  const hit = pointCache.get(key);
  if (hit) {
    pointCache.delete(key);
    pointCache.set(key, hit);
    if (++hit.uses === 2) hit.point.precompute(6);
    return hit.point;
  }
  let Q: GostPoint;
  try {
    Q = curve.Point.fromAffine({
      x: bytesToBigIntLE(raw.subarray(0, curve.size)),
      y: bytesToBigIntLE(raw.subarray(curve.size)),
    });
    Q.assertValidity();
  } catch {
    throw new GostKeyError('GOST public key is not a point of its curve');
  }
  pointCache.set(key, { point: Q, uses: 1 });
  if (pointCache.size > POINT_CACHE_SIZE) pointCache.delete(pointCache.keys().next().value!);
  return Q;
}

/**
 * Verify a GOST R 34.10 signature over an already computed digest.
 * Returns false for a wrong signature, throws GostKeyError for an unusable key.
 */
export function verifyGostDigest(digest: Uint8Array, signature: Uint8Array, publicKeyInfo: pkijs.PublicKeyInfo): boolean {
  const params = publicKeyInfo.algorithm.algorithmParams;
  const first = params instanceof asn1js.Sequence ? params.valueBlock.value[0] : undefined;
  if (!(first instanceof asn1js.ObjectIdentifier)) throw new GostKeyError('GOST public key parameters carry no curve OID');
  const curveOid = first.valueBlock.toString();
  const curve = gostCurveByOid(curveOid);
  if (!curve) throw new GostKeyError(`Unsupported GOST curve ${curveOid}`);
  const keyAsn = asn1js.fromBER(publicKeyInfo.subjectPublicKey.valueBlock.valueHexView);
  if (keyAsn.offset === -1 || !(keyAsn.result instanceof asn1js.OctetString)) {
    throw new GostKeyError('GOST public key is not an OCTET STRING');
  }
  const raw = keyAsn.result.valueBlock.valueHexView;
  if (raw.length !== 2 * curve.size) throw new GostKeyError(`GOST public key has ${raw.length} bytes, expected ${2 * curve.size}`);
  const Q = publicPoint(curve, curveOid, raw);
  if (signature.length !== 2 * curve.size) return false;
  const q = curve.q;
  const s = bytesToBigIntBE(signature.subarray(0, curve.size));
  const r = bytesToBigIntBE(signature.subarray(curve.size));
  if (r <= 0n || r >= q || s <= 0n || s >= q) return false;
  let e = mod(bytesToBigIntLE(digest), q);
  if (e === 0n) e = 1n;
  const v = invert(e, q);
  const z1 = mod(s * v, q);
  const z2 = mod(-r * v, q);
  let C;
  try {
    C = curve.Point.BASE.multiplyUnsafe(z1).add(Q.multiplyUnsafe(z2));
  } catch {
    return false;
  }
  if (C.is0()) return false;
  return mod(C.toAffine().x, q) === r;
}

export class GostCryptoEngine extends pkijs.CryptoEngine {
  constructor() {
    super({ name: 'gost+webcrypto', crypto: globalThis.crypto });
  }

  override getAlgorithmByOID<T extends Algorithm = Algorithm>(oid: string, safety?: boolean, target?: string): T | object;
  override getAlgorithmByOID<T extends Algorithm = Algorithm>(oid: string, safety: true, target?: string): T;
  override getAlgorithmByOID(oid: string, safety?: boolean, target?: string): object {
    const digest = DIGEST_BY_OID[oid];
    if (digest && GOST_DIGESTS[digest]) return { name: digest };
    return super.getAlgorithmByOID(oid, safety, target);
  }

  override getHashAlgorithm(signatureAlgorithm: pkijs.AlgorithmIdentifier): string {
    return GOST_HASH_BY_OID[signatureAlgorithm.algorithmId] ?? super.getHashAlgorithm(signatureAlgorithm);
  }

  override async digest(algorithm: AlgorithmIdentifier, data: BufferSource): Promise<ArrayBuffer> {
    const fn = GOST_DIGESTS[algorithmName(algorithm)];
    if (!fn) return super.digest(algorithm, data);
    const out = fn(toBytes(data));
    return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength) as ArrayBuffer;
  }

  private readonly keyCache = new Map<string, Promise<CryptoKey>>();

  /**
   * WebCrypto keys (RSA, ECDSA) imported once per key and import parameters (LRU 256): pkijs re-imports
   * the SubjectPublicKeyInfo on every check, which for RSA means a DER -> JWK conversion each time.
   */
  override getPublicKey(
    publicKeyInfo: pkijs.PublicKeyInfo,
    signatureAlgorithm: pkijs.AlgorithmIdentifier | null,
    parameters?: pkijs.CryptoEnginePublicKeyParams,
  ): Promise<CryptoKey> {
    const params = publicKeyInfo.algorithm.algorithmParams;
    const curve = params instanceof asn1js.ObjectIdentifier ? params.valueBlock.toString() : '';
    const key = [
      publicKeyInfo.algorithm.algorithmId,
      curve,
      signatureAlgorithm?.algorithmId ?? '',
      signatureAlgorithm?.algorithmParams ? Buffer.from(signatureAlgorithm.algorithmParams.toBER(false)).toString('hex') : '',
      parameters ? JSON.stringify(parameters) : '',
      Buffer.from(publicKeyInfo.subjectPublicKey.valueBlock.valueHexView).toString('hex'),
    ].join('|');
    let found = this.keyCache.get(key);
    if (found) {
      this.keyCache.delete(key);
    } else {
      found = super.getPublicKey(publicKeyInfo, signatureAlgorithm as pkijs.AlgorithmIdentifier, parameters);
      found.catch(() => this.keyCache.delete(key));
    }
    this.keyCache.set(key, found);
    if (this.keyCache.size > 256) this.keyCache.delete(this.keyCache.keys().next().value!);
    return found;
  }

  override async verifyWithPublicKey(
    data: BufferSource,
    signature: asn1js.BitString | asn1js.OctetString,
    publicKeyInfo: pkijs.PublicKeyInfo,
    signatureAlgorithm: pkijs.AlgorithmIdentifier,
    shaAlgorithm?: string,
  ): Promise<boolean> {
    if (!GOST_KEY_OIDS.has(publicKeyInfo.algorithm.algorithmId)) {
      return super.verifyWithPublicKey(data, signature, publicKeyInfo, signatureAlgorithm, shaAlgorithm);
    }
    const hashName = shaAlgorithm ?? this.getHashAlgorithm(signatureAlgorithm);
    const fn = GOST_DIGESTS[hashName];
    if (!fn) throw new GostKeyError(`GOST key cannot be used with digest ${hashName}`);
    return verifyGostDigest(fn(toBytes(data)), signature.valueBlock.valueHexView, publicKeyInfo);
  }
}

let installed: GostCryptoEngine | undefined;

/** Create the engine once and register it with pkijs.setEngine; returns it. */
export function installGostEngine(): GostCryptoEngine {
  if (!installed) {
    installed = new GostCryptoEngine();
    pkijs.setEngine(installed.name, installed);
  }
  return installed;
}
