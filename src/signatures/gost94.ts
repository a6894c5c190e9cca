/**
 * GOST R 34.11-94 hash function (RFC 5831), with the CryptoPro S-box parameter set
 * (id-GostR3411-94-CryptoProParamSet, 1.2.643.2.2.30.1), which is what CMS / OpenSSL
 * `md_gost94` use. The test parameter set (1.2.643.2.2.30.0) is available for vector tests.
 *
 * Own implementation. Byte strings are in "memory" order (as OpenSSL prints them); a 256-bit
 * value is little-endian in memory, so its least significant 64-bit block is bytes 0..7.
 * The S-boxes are the published parameter sets (RFC 4357 section 11.2).
 */

/** S-box rows k8..k1 (k1 substitutes the lowest nibble). */
type SBox = readonly (readonly number[])[];

const CRYPTOPRO_SBOX: SBox = [
  [0x1, 0x3, 0xa, 0x9, 0x5, 0xb, 0x4, 0xf, 0x8, 0x6, 0x7, 0xe, 0xd, 0x0, 0x2, 0xc],
  [0xd, 0xe, 0x4, 0x1, 0x7, 0x0, 0x5, 0xa, 0x3, 0xc, 0x8, 0xf, 0x6, 0x2, 0x9, 0xb],
  [0x7, 0x6, 0x2, 0x4, 0xd, 0x9, 0xf, 0x0, 0xa, 0x1, 0x5, 0xb, 0x8, 0xe, 0xc, 0x3],
  [0x7, 0x6, 0x4, 0xb, 0x9, 0xc, 0x2, 0xa, 0x1, 0x8, 0x0, 0xe, 0xf, 0xd, 0x3, 0x5],
  [0x4, 0xa, 0x7, 0xc, 0x0, 0xf, 0x2, 0x8, 0xe, 0x1, 0x6, 0x5, 0xd, 0xb, 0x9, 0x3],
  [0x7, 0xf, 0xc, 0xe, 0x9, 0x4, 0x1, 0x0, 0x3, 0xb, 0x5, 0x2, 0x6, 0xa, 0x8, 0xd],
  [0x5, 0xf, 0x4, 0x0, 0x2, 0xd, 0xb, 0x9, 0x1, 0x7, 0x6, 0x3, 0xc, 0xe, 0xa, 0x8],
  [0xa, 0x4, 0x5, 0x6, 0x8, 0x1, 0x3, 0x7, 0xd, 0xc, 0xe, 0x0, 0x9, 0x2, 0xb, 0xf],
];

const TEST_SBOX: SBox = [
  [0x1, 0xf, 0xd, 0x0, 0x5, 0x7, 0xa, 0x4, 0x9, 0x2, 0x3, 0xe, 0x6, 0xb, 0x8, 0xc],
  [0xd, 0xb, 0x4, 0x1, 0x3, 0xf, 0x5, 0x9, 0x0, 0xa, 0xe, 0x7, 0x6, 0x8, 0x2, 0xc],
  [0x4, 0xb, 0xa, 0x0, 0x7, 0x2, 0x1, 0xd, 0x3, 0x6, 0x8, 0x5, 0x9, 0xc, 0xf, 0xe],
  [0x6, 0xc, 0x7, 0x1, 0x5, 0xf, 0xd, 0x8, 0x4, 0xa, 0x9, 0xe, 0x0, 0x3, 0xb, 0x2],
  [0x7, 0xd, 0xa, 0x1, 0x0, 0x8, 0x9, 0xf, 0xe, 0x4, 0x6, 0xc, 0xb, 0x2, 0x5, 0x3],
  [0x5, 0x8, 0x1, 0xd, 0xa, 0x3, 0x4, 0x2, 0xe, 0xf, 0xc, 0x7, 0x6, 0x0, 0x9, 0xb],
  [0xe, 0xb, 0x4, 0xc, 0x6, 0xd, 0xf, 0xa, 0x2, 0x3, 0x8, 0x1, 0x0, 0x7, 0x5, 0x9],
  [0x4, 0xa, 0x9, 0x2, 0xd, 0x8, 0x0, 0xe, 0x6, 0xb, 0x1, 0xc, 0x7, 0xf, 0x5, 0x3],
];

/** C3 of the key schedule, in memory byte order (C2 = C4 = 0). */
const C3 = Uint8Array.from([
  0x00, 0xff, 0x00, 0xff, 0x00, 0xff, 0x00, 0xff, 0xff, 0x00, 0xff, 0x00, 0xff, 0x00, 0xff, 0x00,
  0x00, 0xff, 0xff, 0x00, 0xff, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00, 0xff,
]);

/** Byte-wise lookup tables: T[k][b] = S-boxes applied to byte k of a word, rotated left by 11. */
function buildTables(s: SBox): Uint32Array[] {
  const tables: Uint32Array[] = [];
  for (let k = 0; k < 4; k++) {
    const hiRow = s[7 - (2 * k + 1)] ?? [];
    const loRow = s[7 - 2 * k] ?? [];
    const t = new Uint32Array(256);
    for (let b = 0; b < 256; b++) {
      const v = ((((hiRow[b >>> 4] ?? 0) << 4) | (loRow[b & 15] ?? 0)) << (8 * k)) >>> 0;
      t[b] = ((v << 11) | (v >>> 21)) >>> 0;
    }
    tables.push(t);
  }
  return tables;
}

const TABLES = { cryptopro: buildTables(CRYPTOPRO_SBOX), test: buildTables(TEST_SBOX) };

function readU32(b: Uint8Array, o: number): number {
  return ((b[o] ?? 0) | ((b[o + 1] ?? 0) << 8) | ((b[o + 2] ?? 0) << 16) | ((b[o + 3] ?? 0) << 24)) >>> 0;
}

function writeU32(b: Uint8Array, o: number, v: number): void {
  b[o] = v & 0xff;
  b[o + 1] = (v >>> 8) & 0xff;
  b[o + 2] = (v >>> 16) & 0xff;
  b[o + 3] = (v >>> 24) & 0xff;
}

/** GOST 28147-89 ECB encryption of the 8 bytes at in[off..off+8) with a 32-byte key. */
function encryptBlock(t: Uint32Array[], key: Uint8Array, input: Uint8Array, off: number, out: Uint8Array): void {
  const k = new Uint32Array(8);
  for (let i = 0; i < 8; i++) k[i] = readU32(key, 4 * i);
  const [t0, t1, t2, t3] = t as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  const f = (x: number): number =>
    ((t0[x & 0xff] ?? 0) ^ (t1[(x >>> 8) & 0xff] ?? 0) ^ (t2[(x >>> 16) & 0xff] ?? 0) ^ (t3[x >>> 24] ?? 0)) >>> 0;
  let n1 = readU32(input, off);
  let n2 = readU32(input, off + 4);
  for (let round = 0; round < 32; round++) {
    const ki = round < 24 ? round & 7 : 31 - round;
    const tmp = n2 ^ f((n1 + (k[ki] ?? 0)) >>> 0);
    n2 = n1;
    n1 = tmp >>> 0;
  }
  writeU32(out, off, n2);
  writeU32(out, off + 4, n1);
}

function transformA(y: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  out.set(y.subarray(8, 32), 0);
  for (let i = 0; i < 8; i++) out[24 + i] = (y[i] ?? 0) ^ (y[8 + i] ?? 0);
  return out;
}

function transformP(y: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 4; i++) for (let k = 0; k < 8; k++) out[i + 4 * k] = y[8 * i + k] ?? 0;
  return out;
}

function xor32(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = (a[i] ?? 0) ^ (b[i] ?? 0);
  return out;
}

/** psi: shift the sixteen 16-bit words down, the new top word is y1^y2^y3^y4^y13^y16. */
function psi(y: Uint8Array, times: number): Uint8Array {
  let cur = y;
  for (let n = 0; n < times; n++) {
    const out = new Uint8Array(32);
    out.set(cur.subarray(2, 32), 0);
    for (const w of [0, 1, 2, 3, 12, 15]) {
      out[30] = (out[30] ?? 0) ^ (cur[2 * w] ?? 0);
      out[31] = (out[31] ?? 0) ^ (cur[2 * w + 1] ?? 0);
    }
    cur = out;
  }
  return cur;
}

function step(t: Uint32Array[], h: Uint8Array, m: Uint8Array): Uint8Array {
  let u = h;
  let v = m;
  const s = new Uint8Array(32);
  for (let j = 0; j < 4; j++) {
    if (j > 0) {
      u = transformA(u);
      if (j === 2) u = xor32(u, C3);
      v = transformA(transformA(v));
    }
    const key = transformP(xor32(u, v));
    encryptBlock(t, key, h, 8 * j, s);
  }
  return psi(xor32(h, psi(xor32(m, psi(s, 12)), 1)), 61);
}

function add256(a: Uint8Array, b: Uint8Array): void {
  let carry = 0;
  for (let i = 0; i < 32; i++) {
    const s = (a[i] ?? 0) + (b[i] ?? 0) + carry;
    a[i] = s & 0xff;
    carry = s >>> 8;
  }
}

/** GOST R 34.11-94 digest (32 bytes). paramSet 'cryptopro' (default, used by CMS) or 'test'. */
export function gost94(data: Uint8Array, paramSet: 'cryptopro' | 'test' = 'cryptopro'): Uint8Array {
  const t = TABLES[paramSet];
  let h: Uint8Array = new Uint8Array(32);
  const sigma = new Uint8Array(32);
  let off = 0;
  while (off < data.length) {
    const m = new Uint8Array(32);
    m.set(data.subarray(off, off + 32));
    h = step(t, h, m);
    add256(sigma, m);
    off += 32;
  }
  const len = new Uint8Array(32);
  let bits = BigInt(data.length) * 8n;
  for (let i = 0; i < 32 && bits > 0n; i++) {
    len[i] = Number(bits & 0xffn);
    bits >>= 8n;
  }
  h = step(t, h, len);
  return step(t, h, sigma);
}
