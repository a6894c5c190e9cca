import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool } from '../helpers/tools.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gost94 } from '../../src/signatures/gost94.js';
import { streebog256, streebog512 } from '../../src/signatures/streebog.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

// GOST R 34.11-2012 / RFC 6986 examples. M1 is the 63-byte string below; M2 the 72-byte one.
// Expected values are in memory byte order (as OpenSSL and gost12sum print them).
const M1 = ascii('012345678901234567890123456789012345678901234567890123456789012');
const M2 = Buffer.from(
  'd1e520e2e5f2f0e82c20d1f2f0e8e1eee6e820e2edf3f6e82c20e2e5fef2fa20f120eceef0ff20f1f2f0e5ebe0ece820ede020f5f0e0e1f0fbff20efebfaeafb20c8e3eef0e5e2fb',
  'hex',
).reverse();

describe('Streebog (GOST R 34.11-2012)', () => {
  it('matches the standard example M1', () => {
    expect(hex(streebog512(M1))).toBe(
      '1b54d01a4af5b9d5cc3d86d68d285462b19abc2475222f35c085122be4ba1ffa00ad30f8767b3a82384c6574f024c311e2a481332b08ef7f41797891c1646f48',
    );
    expect(hex(streebog256(M1))).toBe('9d151eefd8590b89daa6ba6cb74af9275dd051026bb149a452fd84e5e57b5500');
  });
  it('matches the standard example M2', () => {
    expect(hex(streebog512(M2))).toBe(
      '9663a3abce48e5b8545169e9ede65e0c96b827afdad47ac56c8ba343b3628e64a25418a6ed0685e414a4420960c38e102180f7e1759f8f61262185115fea5703',
    );
    expect(hex(streebog256(M2))).toBe('0e7ab4efd0915eaac2dab58dae45d0f28d14f83c57794b3338f7872c10542c19');
  });
});

describe('GOST R 34.11-94 (CryptoPro parameters)', () => {
  it('matches published vectors', () => {
    expect(hex(gost94(ascii('abc')))).toBe('b285056dbf18d7392d7677369524dd14747459ed8143997e163b2986f92fd42c');
    expect(hex(gost94(new Uint8Array(0)))).toBe('981e5f3ca30c841487830f84fb433e13ac1101569b9c13584ac483234cd656c0');
    expect(hex(gost94(ascii('The quick brown fox jumps over the lazy dog')))).toBe(
      '9004294a361a508c586fe53d1f1b02746765e71b765472786e4770d565830a76',
    );
  });
});

describe('digests agree with OpenSSL gost engine and gost12sum', () => {
  let dir = '';
  let conf = '';
  const lengths = [1, 31, 32, 33, 63, 64, 65, 127, 128, 1000, 4097];
  const sample = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 131 + 7) & 0xff);
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gost-digest-'));
    conf = join(dir, 'gost.cnf');
    const so = runTool('dpkg', ['-L', 'libengine-gost-openssl']).split('\n').find((f) => f.endsWith('/engines-3/gost.so'));
    if (!so) throw new Error('gost engine missing: apt-get install the packages in scripts/ci-apt-packages.txt');
    writeFileSync(conf, `openssl_conf = d\n[d]\nengines = e\n[e]\ngost = g\n[g]\nengine_id = gost\ndynamic_path = ${so}\ndefault_algorithms = ALL\n`);
    for (const n of lengths) writeFileSync(join(dir, `m${n}`), sample(n));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const openssl = (md: string, n: number): string => {
    const out = runTool('openssl', ['dgst', `-${md}`, '-r', join(dir, `m${n}`)], { env: { ...process.env, OPENSSL_CONF: conf } });
    return out.split(' ')[0] ?? '';
  };
  it('Streebog-256/512 equal openssl md_gost12_256/512 and gost12sum', () => {
    for (const n of lengths) {
      expect(hex(streebog256(sample(n))), `len ${n}`).toBe(openssl('md_gost12_256', n));
      expect(hex(streebog512(sample(n))), `len ${n}`).toBe(openssl('md_gost12_512', n));
      const sum = runTool('gost12sum', [join(dir, `m${n}`)]).split(' ')[0];
      expect(hex(streebog256(sample(n))), `gost12sum len ${n}`).toBe(sum);
    }
  });
  it('GOST R 34.11-94 equals openssl md_gost94 (non-empty input)', () => {
    for (const n of lengths) expect(hex(gost94(sample(n))), `len ${n}`).toBe(openssl('md_gost94', n));
  });
});
