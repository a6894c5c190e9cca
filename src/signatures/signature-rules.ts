import { z } from 'zod';
import { storableDate } from '../validation.js';

// Edge rules of the signature-verification area: the GraphQL resolver and the REST routes both use them.

export const TRUST_PROFILE = { DEFAULT: 'DEFAULT', CLOUD: 'CLOUD', TECH: 'TECH' } as const;
export type TrustProfileName = (typeof TRUST_PROFILE)[keyof typeof TRUST_PROFILE];
export const TRUST_PROFILES = Object.values(TRUST_PROFILE);

export const DIGEST_PARAMETERS = ['HASH_GOST3411_94', 'HASH_GOST3411_2012_256', 'HASH_GOST3411_2012_512'] as const;

/** Same tolerance as the core's decoder: whitespace and PEM armour lines are ignored. */
export function isBase64(text: string): boolean {
  const body = text.replace(/-----(BEGIN|END)[^-]*-----/g, '').replace(/\s+/g, '');
  return body.length > 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(body) && body.length % 4 !== 1;
}

const base64 = z.string().min(1, 'must not be empty').refine((v) => v === '' || isBase64(v), 'must be base64');
const text = (max: number) => z.string().max(max, `must be at most ${max} characters`);

export const customParameter = z.strictObject({ name: text(256).min(1, 'must not be empty'), value: text(4096) });

export const auditParametersRules = z.strictObject({
  userId: text(256).optional(),
  systemId: text(256).optional(),
  clientIp: text(64).optional(),
  requestId: text(256).optional(),
  customParameters: z.array(customParameter).max(50, 'must have at most 50 items').optional(),
});
export type AuditParameters = z.output<typeof auditParametersRules>;

/** Fields of one verification (CmsVerificationRequest of v2, the v1 body, the GraphQL input). */
export const verificationFields = {
  cmsBase64: base64,
  dataBase64: z.string().refine((v) => v === '' || isBase64(v), 'must be base64').optional(),
  checkTime: storableDate('must be an ISO 8601 date-time').optional(),
  digestParameter: z.enum(DIGEST_PARAMETERS).optional(),
  needSignedData: z.boolean().optional(),
};

export const verifyCmsRules = z.strictObject({
  ...verificationFields,
  profile: z.enum(TRUST_PROFILES).default('DEFAULT'),
  alias: text(256).optional(),
  businessProduct: text(256).optional(),
  audit: auditParametersRules.optional(),
});
export type VerifyCmsInput = z.output<typeof verifyCmsRules>;

export const trustedRootPem = z
  .string()
  .min(1, 'must not be empty')
  .max(65_536, 'must be at most 65536 characters')
  .refine((v) => /-----BEGIN CERTIFICATE-----/.test(v) || isBase64(v), 'must be a PEM certificate');
export const fingerprint = z.string().regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 fingerprint (64 lower-case hex digits)');

export const auditFilterRules = z.strictObject({
  userId: text(256).optional(),
  systemId: text(256).optional(),
  requestId: text(256).optional(),
  status: text(64).optional(),
  valid: z.boolean().optional(),
  profile: z.enum(TRUST_PROFILES).optional(),
  from: z.date().optional(),
  to: z.date().optional(),
});
export type AuditFilter = z.output<typeof auditFilterRules>;

const isoDateTime = z
  .string()
  .refine((v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 date-time with a zone');

/** The REST bodies carry checkTime as text; it reaches GraphQL as a DateTime string. */
export const restVerificationFields = { ...verificationFields, checkTime: isoDateTime.optional() };
