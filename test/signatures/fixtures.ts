/** Shared test helpers: run the OpenSSL fixture script once per test file into a temp dir. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface Fixtures {
  dir: string;
  b64(name: string): string;
  bytes(name: string): Uint8Array;
  gost: boolean;
  cleanup(): void;
}

export function makeFixtures(): Fixtures {
  const dir = mkdtempSync(join(tmpdir(), 'cms-fixtures-'));
  const script = resolve(import.meta.dirname, '../../scripts/make-cms-fixtures.sh');
  execFileSync('bash', [script, dir], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
  const bytes = (name: string): Uint8Array => new Uint8Array(readFileSync(join(dir, name)));
  return {
    dir,
    bytes,
    b64: (name) => Buffer.from(bytes(name)).toString('base64'),
    gost: !existsSync(join(dir, 'NO_GOST')),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Replace the first occurrence of `from` by `to` (same length); fails when not found. */
export function patchFirst(der: Uint8Array, from: number[], to: number[]): Uint8Array {
  const hay = Buffer.from(der);
  const at = hay.indexOf(Buffer.from(from));
  if (at < 0) throw new Error('pattern not found');
  const out = Uint8Array.from(der);
  out.set(to, at);
  return out;
}

export const OID_BYTES = {
  data: [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01],
  contentTypeAttr: [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x03],
  messageDigestAttr: [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x04],
};

export function withLastByte(oid: number[], last: number): number[] {
  return [...oid.slice(0, -1), last];
}
