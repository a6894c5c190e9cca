import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Config } from '../config.js';
import type { EventBus } from '../events/bus.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { translateWriteErrors } from '../db/errors.js';
import { notifyEvent } from '../db/sql/notifyEvent.js';
import { parseCertificate } from './chain.js';
import { describeName } from './names.js';
import type { TrustProfileName } from './signature-rules.js';

// Trust anchors per profile: PEM files of the profile's directory (read once, at start) plus the roots
// added through the API (TrustedRoot rows, cached, dropped on every change announced on topic `trustedRoot`, on
// every resync of the event bus, and after TRUST_CACHE_MAX_AGE_MS at the latest, so a lost NOTIFY cannot keep a
// removed root trusted).

/** The longest a cached set of API roots is used without being read again. */
export const TRUST_CACHE_MAX_AGE_MS = 30_000;

export type TrustSource = 'DIRECTORY' | 'API';

export interface TrustAnchor {
  profile: TrustProfileName;
  source: TrustSource;
  fingerprint: string;
  subject: string;
  notAfter: Date;
  addedAt: Date | null;
  der: Uint8Array;
}

/** The anchors of one profile at one moment; `version` changes whenever the set may have changed. */
export interface TrustSet {
  profile: TrustProfileName;
  version: number;
  roots: Uint8Array[];
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g;

export function pemBlocks(text: string): Uint8Array[] {
  return [...text.matchAll(PEM_BLOCK)].map((m) => new Uint8Array(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64')));
}

export function toPem(der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

export function describeCertificate(der: Uint8Array): { fingerprint: string; subject: string; notAfter: Date } {
  const parsed = parseCertificate(der);
  return {
    fingerprint: createHash('sha256').update(der).digest('hex'),
    subject: describeName(parsed.cert.subject).rdn,
    notAfter: parsed.cert.notAfter.value,
  };
}

/** Every certificate of every *.pem, *.crt, *.cer (PEM) or *.der file in `dir`; unreadable files are skipped. */
export function readTrustDirectory(dir: string, profile: TrustProfileName): TrustAnchor[] {
  const anchors: TrustAnchor[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (error) {
    throw new Error(`trust directory ${dir} cannot be read: ${(error as Error).message}`);
  }
  for (const name of names) {
    if (!/\.(pem|crt|cer|der)$/i.test(name)) continue;
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    const bytes = readFileSync(path);
    const ders = /\.der$/i.test(name) ? [new Uint8Array(bytes)] : pemBlocks(bytes.toString('latin1'));
    for (const der of ders) {
      try {
        anchors.push({ profile, source: 'DIRECTORY', addedAt: null, der, ...describeCertificate(der) });
      } catch {
        // not a certificate: ignored, as an unreadable anchor is by the core
      }
    }
  }
  return anchors;
}

function directoryOf(config: Config, profile: TrustProfileName): string | undefined {
  if (profile === 'CLOUD') return config.TRUST_DIR_CLOUD ?? config.TRUST_DIR;
  if (profile === 'TECH') return config.TRUST_DIR_TECH ?? config.TRUST_DIR;
  return config.TRUST_DIR;
}

export class TrustStore {
  private readonly directory = new Map<TrustProfileName, TrustAnchor[]>();
  private readonly sets = new Map<TrustProfileName, { set: Promise<TrustSet>; readAt: number }>();
  private generation = 1;
  private readonly unsubscribe: (() => void)[];

  constructor(
    private readonly db: PrismaClient,
    private readonly config: Config,
    bus: EventBus,
  ) {
    // read the directories now, so that a wrong TRUST_DIR* stops start-up instead of failing requests
    for (const profile of ['DEFAULT', 'CLOUD', 'TECH'] as const) this.directoryAnchors(profile);
    this.unsubscribe = [bus.onTopic('trustedRoot', () => this.invalidate()), bus.onResync(() => this.invalidate())];
  }

  /** Directory anchors of a profile, read once at start (restart the gateway to pick up file changes). */
  directoryAnchors(profile: TrustProfileName): TrustAnchor[] {
    let anchors = this.directory.get(profile);
    if (!anchors) {
      const dir = directoryOf(this.config, profile);
      anchors = dir ? readTrustDirectory(dir, profile) : [];
      this.directory.set(profile, anchors);
    }
    return anchors;
  }

  async anchors(profile: TrustProfileName): Promise<TrustAnchor[]> {
    const rows = await this.db.trustedRoot.findMany({ where: { profile }, orderBy: { addedAt: 'asc' } });
    const api: TrustAnchor[] = rows.map((r) => ({
      profile,
      source: 'API',
      fingerprint: r.fingerprint,
      subject: r.subject,
      notAfter: r.notAfter,
      addedAt: r.addedAt,
      der: new Uint8Array(r.der),
    }));
    return [...this.directoryAnchors(profile), ...api];
  }

  /** The anchors a verification of `profile` uses; one database read per change, not per request. */
  rootsFor(profile: TrustProfileName): Promise<TrustSet> {
    const cached = this.sets.get(profile);
    if (cached && Date.now() - cached.readAt < TRUST_CACHE_MAX_AGE_MS) return cached.set;
    if (cached) this.generation += 1; // read again: the verifier threads must not keep what they hold of the old set
    const version = this.generation;
    const entry = { set: this.anchors(profile).then((anchors) => ({ profile, version, roots: anchors.map((a) => a.der) })), readAt: Date.now() };
    entry.set.catch(() => this.sets.get(profile) === entry && this.sets.delete(profile));
    this.sets.set(profile, entry);
    return entry.set;
  }

  invalidate(): void {
    this.generation += 1;
    this.sets.clear();
  }

  close(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
  }

  async addRoot(profile: TrustProfileName, pem: string): Promise<TrustAnchor> {
    const blocks = /-----BEGIN/.test(pem) ? pemBlocks(pem) : [new Uint8Array(Buffer.from(pem.replace(/\s+/g, ''), 'base64'))];
    if (blocks.length !== 1) throw new ValidationError([{ field: 'pem', message: 'must hold exactly one certificate' }]);
    const der = blocks[0]!;
    let info: ReturnType<typeof describeCertificate>;
    try {
      info = describeCertificate(der);
    } catch {
      throw new ValidationError([{ field: 'pem', message: 'is not an X.509 certificate' }]);
    }
    const row = await translateWriteErrors(`trusted root ${info.fingerprint} in profile ${profile}`, () =>
      this.db.$transaction(async (tx) => {
        const created = await tx.trustedRoot.create({ data: { profile, der: Buffer.from(der), ...info } });
        await notifyEvent(tx, 'trustedRoot', profile);
        return created;
      }),
    );
    this.invalidate();
    return { profile, source: 'API', fingerprint: row.fingerprint, subject: row.subject, notAfter: row.notAfter, addedAt: row.addedAt, der };
  }

  async removeRoot(profile: TrustProfileName, fingerprint: string): Promise<TrustAnchor> {
    const row = await this.db.$transaction(async (tx) => {
      const found = await tx.trustedRoot.findUnique({ where: { profile_fingerprint: { profile, fingerprint } } });
      if (!found) throw new NotFoundError(`trusted root ${fingerprint} not found in profile ${profile} (directory roots are removed from the directory)`);
      await tx.trustedRoot.delete({ where: { id: found.id } });
      await notifyEvent(tx, 'trustedRoot', profile);
      return found;
    });
    this.invalidate();
    return { profile, source: 'API', fingerprint: row.fingerprint, subject: row.subject, notAfter: row.notAfter, addedAt: row.addedAt, der: new Uint8Array(row.der) };
  }
}
