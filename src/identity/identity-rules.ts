import { z } from 'zod';
import { builtOncePerLimits } from '../validation.js';

// Rules of the identity area: identifiers, paging of employments, and the import file.

/** An ESIA object identifier (person or organization): 1 to 20 digits. */
export const oidRule = z
  .string({ message: 'is required' })
  .regex(/^\d{1,20}$/, 'must be an oid: 1 to 20 digits');

/** Group identifiers are free text in ESIA (`grp_id`, e.g. "ESIA_ADMIN"). */
export const grpIdRule = z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be 1-128 letters, digits, "_", ".", ":" or "-"');

export const PERSON_STATUS = { REGISTERED: 'REGISTERED', DELETED: 'DELETED' } as const;
export const ORGANIZATION_TYPE = { LEGAL: 'LEGAL', BUSINESS: 'BUSINESS', AGENCY: 'AGENCY' } as const;

/** Employment pages: ESIA collections page with pageSize and a 1-based pageIndex. */
export const employmentPageRule = builtOncePerLimits((maxPageSize: number, defaultPageSize: number) =>
  z.object({
    pageSize: z.number().int('must be an integer').min(1, 'must be at least 1').max(maxPageSize, `must be at most ${maxPageSize}`).default(defaultPageSize),
    pageIndex: z.number().int('must be an integer').min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000').default(1),
  }),
);

const optionalText = (max: number) => z.string().max(max, `must be at most ${max} characters`).nullable().optional();
const dateOnly = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date yyyy-mm-dd');

export const importPerson = z.strictObject({
  oid: oidRule,
  firstName: z.string().min(1, 'must not be empty').max(200),
  lastName: z.string().min(1, 'must not be empty').max(200),
  middleName: optionalText(200),
  birthDate: z.string().regex(/^\d{2}\.\d{2}\.\d{4}$/, 'must be dd.MM.yyyy').nullable().optional(),
  birthPlace: optionalText(500),
  gender: z.enum(['M', 'F'], { message: 'must be M or F' }).nullable().optional(),
  trusted: z.boolean().optional(),
  rfgUOperatorCheck: z.boolean().optional(),
  citizenship: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 3166-1 alpha-3 code').nullable().optional(),
  snils: z.string().regex(/^\d{3}-\d{3}-\d{3} \d{2}$/, 'must be written 000-000-000 00').nullable().optional(),
  inn: z.string().regex(/^\d{12}$/, 'must be 12 digits').nullable().optional(),
  updatedOn: z.number().int().min(0, 'must be seconds since 1970').optional(),
  status: z.enum(PERSON_STATUS).optional(),
  verifying: z.boolean().optional(),
  rIdDoc: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().optional(),
  containsUpCfmCode: z.boolean().optional(),
  stateFacts: z.array(z.string().max(100)).max(32).optional(),
});

export const importOrganization = z.strictObject({
  oid: oidRule,
  shortName: z.string().min(1, 'must not be empty').max(500),
  fullName: z.string().min(1, 'must not be empty').max(2000),
  type: z.enum(ORGANIZATION_TYPE).optional(),
  ogrn: z.string().regex(/^(\d{13}|\d{15})$/, 'must be 13 or 15 digits').nullable().optional(),
  inn: z.string().regex(/^(\d{10}|\d{12})$/, 'must be 10 or 12 digits').nullable().optional(),
  kpp: z.string().regex(/^\d{9}$/, 'must be 9 digits').nullable().optional(),
  leg: z.string().regex(/^\d{5}$/, 'must be a 5-digit OKOPF code').nullable().optional(),
  active: z.boolean().optional(),
});

export const importGroup = z.strictObject({
  grpId: grpIdRule,
  name: z.string().min(1, 'must not be empty').max(500),
  description: z.string().max(2000).optional(),
  itSystem: optionalText(200),
  organizationOid: oidRule,
});

export const importMembership = z.strictObject({
  personOid: oidRule,
  organizationOid: oidRule,
  position: optionalText(500),
  role: optionalText(200),
  chief: z.boolean().optional(),
  admin: z.boolean().optional(),
  active: z.boolean().optional(),
  email: optionalText(320),
  phone: optionalText(50),
  startDate: dateOnly.nullable().optional(),
  endDate: dateOnly.nullable().optional(),
});

export const importGroupMembership = z.strictObject({ personOid: oidRule, grpId: grpIdRule });

export const importFile = z.strictObject({
  persons: z.array(importPerson).default([]),
  organizations: z.array(importOrganization).default([]),
  groups: z.array(importGroup).default([]),
  memberships: z.array(importMembership).default([]),
  groupMemberships: z.array(importGroupMembership).default([]),
});

export type ImportFile = z.output<typeof importFile>;
export type ImportPerson = z.output<typeof importPerson>;
