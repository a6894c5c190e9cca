/**
 * GOST R 34.11-2012 ("Streebog") hash function, 256- and 512-bit variants.
 *
 * Own implementation after RFC 6986. Byte order: input and output are byte strings in the usual
 * "memory" order used by OpenSSL, gost12sum and CMS (the standard's vectors printed as numbers are
 * the byte-reversed form). Internally a 512-bit vector is eight 64-bit words, word i = bytes
 * 8i..8i+7 little-endian, each kept as two 32-bit halves so no BigInt is needed in the hot loop.
 *
 * The tables PI (the S-box), A (the linear map) and C (iteration constants) are the standard's
 * published constants (RFC 6986 sections 6.1, 6.3, 6.4 and 6.2).
 */

const PI = Uint8Array.from([
  0xfc, 0xee, 0xdd, 0x11, 0xcf, 0x6e, 0x31, 0x16, 0xfb, 0xc4, 0xfa, 0xda, 0x23, 0xc5, 0x04, 0x4d,
  0xe9, 0x77, 0xf0, 0xdb, 0x93, 0x2e, 0x99, 0xba, 0x17, 0x36, 0xf1, 0xbb, 0x14, 0xcd, 0x5f, 0xc1,
  0xf9, 0x18, 0x65, 0x5a, 0xe2, 0x5c, 0xef, 0x21, 0x81, 0x1c, 0x3c, 0x42, 0x8b, 0x01, 0x8e, 0x4f,
  0x05, 0x84, 0x02, 0xae, 0xe3, 0x6a, 0x8f, 0xa0, 0x06, 0x0b, 0xed, 0x98, 0x7f, 0xd4, 0xd3, 0x1f,
  0xeb, 0x34, 0x2c, 0x51, 0xea, 0xc8, 0x48, 0xab, 0xf2, 0x2a, 0x68, 0xa2, 0xfd, 0x3a, 0xce, 0xcc,
  0xb5, 0x70, 0x0e, 0x56, 0x08, 0x0c, 0x76, 0x12, 0xbf, 0x72, 0x13, 0x47, 0x9c, 0xb7, 0x5d, 0x87,
  0x15, 0xa1, 0x96, 0x29, 0x10, 0x7b, 0x9a, 0xc7, 0xf3, 0x91, 0x78, 0x6f, 0x9d, 0x9e, 0xb2, 0xb1,
  0x32, 0x75, 0x19, 0x3d, 0xff, 0x35, 0x8a, 0x7e, 0x6d, 0x54, 0xc6, 0x80, 0xc3, 0xbd, 0x0d, 0x57,
  0xdf, 0xf5, 0x24, 0xa9, 0x3e, 0xa8, 0x43, 0xc9, 0xd7, 0x79, 0xd6, 0xf6, 0x7c, 0x22, 0xb9, 0x03,
  0xe0, 0x0f, 0xec, 0xde, 0x7a, 0x94, 0xb0, 0xbc, 0xdc, 0xe8, 0x28, 0x50, 0x4e, 0x33, 0x0a, 0x4a,
  0xa7, 0x97, 0x60, 0x73, 0x1e, 0x00, 0x62, 0x44, 0x1a, 0xb8, 0x38, 0x82, 0x64, 0x9f, 0x26, 0x41,
  0xad, 0x45, 0x46, 0x92, 0x27, 0x5e, 0x55, 0x2f, 0x8c, 0xa3, 0xa5, 0x7d, 0x69, 0xd5, 0x95, 0x3b,
  0x07, 0x58, 0xb3, 0x40, 0x86, 0xac, 0x1d, 0xf7, 0x30, 0x37, 0x6b, 0xe4, 0x88, 0xd9, 0xe7, 0x89,
  0xe1, 0x1b, 0x83, 0x49, 0x4c, 0x3f, 0xf8, 0xfe, 0x8d, 0x53, 0xaa, 0x90, 0xca, 0xd8, 0x85, 0x61,
  0x20, 0x71, 0x67, 0xa4, 0x2d, 0x2b, 0x09, 0x5b, 0xcb, 0x9b, 0x25, 0xd0, 0xbe, 0xe5, 0x6c, 0x52,
  0x59, 0xa6, 0x74, 0xd2, 0xe6, 0xf4, 0xb4, 0xc0, 0xd1, 0x66, 0xaf, 0xc2, 0x39, 0x4b, 0x63, 0xb6,
]);

/** Rows of the linear transformation matrix A; row 0 belongs to the most significant input bit. */
const A = [
  '8e20faa72ba0b470', '47107ddd9b505a38', 'ad08b0e0c3282d1c', 'd8045870ef14980e',
  '6c022c38f90a4c07', '3601161cf205268d', '1b8e0b0e798c13c8', '83478b07b2468764',
  'a011d380818e8f40', '5086e740ce47c920', '2843fd2067adea10', '14aff010bdd87508',
  '0ad97808d06cb404', '05e23c0468365a02', '8c711e02341b2d01', '46b60f011a83988e',
  '90dab52a387ae76f', '486dd4151c3dfdb9', '24b86a840e90f0d2', '125c354207487869',
  '092e94218d243cba', '8a174a9ec8121e5d', '4585254f64090fa0', 'accc9ca9328a8950',
  '9d4df05d5f661451', 'c0a878a0a1330aa6', '60543c50de970553', '302a1e286fc58ca7',
  '18150f14b9ec46dd', '0c84890ad27623e0', '0642ca05693b9f70', '0321658cba93c138',
  '86275df09ce8aaa8', '439da0784e745554', 'afc0503c273aa42a', 'd960281e9d1d5215',
  'e230140fc0802984', '71180a8960409a42', 'b60c05ca30204d21', '5b068c651810a89e',
  '456c34887a3805b9', 'ac361a443d1c8cd2', '561b0d22900e4669', '2b838811480723ba',
  '9bcf4486248d9f5d', 'c3e9224312c8c1a0', 'effa11af0964ee50', 'f97d86d98a327728',
  'e4fa2054a80b329c', '727d102a548b194e', '39b008152acb8227', '9258048415eb419d',
  '492c024284fbaec0', 'aa16012142f35760', '550b8e9e21f7a530', 'a48b474f9ef5dc18',
  '70a6a56e2440598e', '3853dc371220a247', '1ca76e95091051ad', '0edd37c48a08a6d8',
  '07e095624504536c', '8d70c431ac02a736', 'c83862965601dd1b', '641c314b2b8ee083',
];

/** Iteration constants C1..C12, each as eight 64-bit words, least significant word first. */
const C = [
  ['dd806559f2a64507', '05767436cc744d23', 'a2422a08a460d315', '4b7ce09192676901',
    '714eb88d7585c4fc', '2f6a76432e45d016', 'ebcb2f81c0657c1f', 'b1085bda1ecadae9'],
  ['e679047021b19bb7', '55dda21bd7cbcd56', '5cb561c2db0aa7ca', '9ab5176b12d69958',
    '61d55e0f16b50131', 'f3feea720a232b98', '4fe39d460f70b5d7', '6fa3b58aa99d2f1a'],
  ['991e96f50aba0ab2', 'c2b6f443867adb31', 'c1c93a376062db09', 'd3e20fe490359eb1',
    'f2ea7514b1297b7b', '06f15e5f529c1f8b', '0a39fc286a3d8435', 'f574dcac2bce2fc7'],
  ['220cbebc84e3d12e', '3453eaa193e837f1', 'd8b71333935203be', 'a9d72c82ed03d675',
    '9d721cad685e353f', '488e857e335c3c7d', 'f948e1a05d71e4dd', 'ef1fdfb3e81566d2'],
  ['601758fd7c6cfe57', '7a56a27ea9ea63f5', 'dfff00b723271a16', 'bfcd1747253af5a3',
    '359e35d7800fffbd', '7f151c1f1686104a', '9a3f410c6ca92363', '4bea6bacad474799'],
  ['fa68407a46647d6e', 'bf71c57236904f35', '0af21f66c2bec6b6', 'cffaa6b71c9ab7b4',
    '187f9ab49af08ec6', '2d66c4f95142a46c', '6fa4c33b7a3039c0', 'ae4faeae1d3ad3d9'],
  ['8886564d3a14d493', '3517454ca23c4af3', '06476983284a0504', '0992abc52d822c37',
    'd3473e33197a93c9', '399ec6c7e6bf87c9', '51ac86febf240954', 'f4c70e16eeaac5ec'],
  ['a47f0dd4bf02e71e', '36acc2355951a8d9', '69d18d2bd1a5c42f', 'f4892bcb929b0690',
    '89b4443b4ddbc49a', '4eb7f8719c36de1e', '03e7aa020c6e4141', '9b1f5b424d93c9a7'],
  ['7261445183235adb', '0e38dc92cb1f2a60', '7b2b8a9aa6079c54', '800a440bdbb2ceb1',
    '3cd955b7e00d0984', '3a7d3a1b25894224', '944c9ad8ec165fde', '378f5a541631229b'],
  ['74b4c7fb98459ced', '3698fad1153bb6c3', '7a1e6c303b7652f4', '9fe76702af69334b',
    '1fffe18a1b336103', '8941e71cff8a78db', '382ae548b2e4f3f3', 'abbedea680056f52'],
  ['6bcaa4cd81f32d1b', 'dea2594ac06fd85d', 'efbacd1d7d476e98', '8a1d71efea48b9ca',
    '2001802114846679', 'd8fa6bbbebab0761', '3002c6cd635afe94', '7bcd9ed0efc889fb'],
  ['48bc924af11bd720', 'faf417d5d9b21b99', 'e71da4aa88e12852', '5d80ef9d1891cc86',
    'f82012d430219f9b', 'cda43c32bcdf1d77', 'd21380b00449b17a', '378ee767f11631ba'],
];

/** A 512-bit vector: 16 uint32, [lo0, hi0, lo1, hi1, ...]. */
type Vec = Uint32Array;

// T[j][b] = L(PI[b] << 8j): the combined S, P and L step for byte b found in byte j of a word.
const T_LO = new Uint32Array(8 * 256);
const T_HI = new Uint32Array(8 * 256);
const C_VEC: Vec[] = C.map((words) => {
  const v = new Uint32Array(16);
  words.forEach((w, i) => {
    v[2 * i] = Number.parseInt(w.slice(8), 16) >>> 0;
    v[2 * i + 1] = Number.parseInt(w.slice(0, 8), 16) >>> 0;
  });
  return v;
});

(function buildTables(): void {
  const aLo = A.map((r) => Number.parseInt(r.slice(8), 16) >>> 0);
  const aHi = A.map((r) => Number.parseInt(r.slice(0, 8), 16) >>> 0);
  for (let j = 0; j < 8; j++) {
    for (let b = 0; b < 256; b++) {
      const s = PI[b] ?? 0;
      let lo = 0;
      let hi = 0;
      for (let t = 0; t < 8; t++) {
        if ((s >>> t) & 1) {
          const row = 63 - (8 * j + t);
          lo ^= aLo[row] ?? 0;
          hi ^= aHi[row] ?? 0;
        }
      }
      T_LO[j * 256 + b] = lo >>> 0;
      T_HI[j * 256 + b] = hi >>> 0;
    }
  }
})();

/** out = LPS(x ^ y). out may alias neither x nor y. */
function xlps(x: Vec, y: Vec, out: Vec): void {
  const r = new Uint32Array(16);
  for (let k = 0; k < 16; k++) r[k] = (x[k] ?? 0) ^ (y[k] ?? 0);
  for (let i = 0; i < 8; i++) {
    // byte i of word j lives in r[2j] (i < 4) or r[2j+1] (i >= 4)
    const half = i < 4 ? 0 : 1;
    const shift = (i & 3) * 8;
    let lo = 0;
    let hi = 0;
    for (let j = 0; j < 8; j++) {
      const b = ((r[2 * j + half] ?? 0) >>> shift) & 0xff;
      lo ^= T_LO[j * 256 + b] ?? 0;
      hi ^= T_HI[j * 256 + b] ?? 0;
    }
    out[2 * i] = lo >>> 0;
    out[2 * i + 1] = hi >>> 0;
  }
}

/** h = g_N(h, m) = E(LPS(h ^ N), m) ^ h ^ m. */
function compress(h: Vec, n: Vec, m: Vec): void {
  let k: Vec = new Uint32Array(16);
  let t: Vec = new Uint32Array(16);
  let tmp: Vec = new Uint32Array(16);
  xlps(h, n, k);
  xlps(k, m, t);
  for (let i = 0; i < 11; i++) {
    xlps(k, C_VEC[i] as Vec, tmp);
    [k, tmp] = [tmp, k];
    xlps(k, t, tmp);
    [t, tmp] = [tmp, t];
  }
  xlps(k, C_VEC[11] as Vec, tmp);
  k = tmp;
  for (let i = 0; i < 16; i++) h[i] = ((t[i] ?? 0) ^ (k[i] ?? 0) ^ (h[i] ?? 0) ^ (m[i] ?? 0)) >>> 0;
}

/** a = (a + b) mod 2^512. */
function add512(a: Vec, b: Vec): void {
  let carry = 0;
  for (let i = 0; i < 16; i++) {
    const s = (a[i] ?? 0) + (b[i] ?? 0) + carry;
    a[i] = s >>> 0;
    carry = s > 0xffffffff ? 1 : 0;
  }
}

function loadBlock(data: Uint8Array, offset: number, len: number): Vec {
  const bytes = new Uint8Array(64);
  bytes.set(data.subarray(offset, offset + len));
  if (len < 64) bytes[len] = 0x01;
  const v = new Uint32Array(16);
  const dv = new DataView(bytes.buffer);
  for (let i = 0; i < 16; i++) v[i] = dv.getUint32(i * 4, true);
  return v;
}

function streebog(data: Uint8Array, outBits: 256 | 512): Uint8Array {
  const h = new Uint32Array(16).fill(outBits === 256 ? 0x01010101 : 0);
  const n = new Uint32Array(16);
  const sigma = new Uint32Array(16);
  const zero = new Uint32Array(16);
  const block512 = new Uint32Array(16);
  block512[0] = 512;
  let off = 0;
  while (data.length - off >= 64) {
    const m = loadBlock(data, off, 64);
    compress(h, n, m);
    add512(n, block512);
    add512(sigma, m);
    off += 64;
  }
  const rest = data.length - off;
  const m = loadBlock(data, off, rest);
  compress(h, n, m);
  const bits = new Uint32Array(16);
  bits[0] = rest * 8;
  add512(n, bits);
  add512(sigma, m);
  compress(h, zero, n);
  compress(h, zero, sigma);
  const out = new Uint8Array(64);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < 16; i++) dv.setUint32(i * 4, h[i] ?? 0, true);
  return outBits === 512 ? out : out.slice(32);
}

/** GOST R 34.11-2012 with a 256-bit result (OID 1.2.643.7.1.1.2.2). */
export function streebog256(data: Uint8Array): Uint8Array {
  return streebog(data, 256);
}

/** GOST R 34.11-2012 with a 512-bit result (OID 1.2.643.7.1.1.2.3). */
export function streebog512(data: Uint8Array): Uint8Array {
  return streebog(data, 512);
}
