import { z } from 'zod';
import type { Config } from '../../config.js';
import { auditParametersRules, restVerificationFields, type AuditParameters } from '../../signatures/signature-rules.js';
import * as op from '../../generated/graphql/graphql.js';
import { httpRoute, type HttpFailure, type HttpRoute } from './http-route.js';
import { data, each, either, flatEach, leftOutWhenNull, literal, named, object, orElse, outer, within, type Shape } from './answer-shape.js';

// Spec 4.4: POST /v2/verify/cms/{cloud,tech} and POST /v1/checkSign/cms. All three run the VerifyCms
// operation; v1 and v2 shapes are built from its one typed result. Verification outcomes answer 200 with
// the status inside; malformed requests answer 400 in the same envelope.

type Verification = op.LegacyCmsVerificationFragment;
type Signer = Verification['signers'][number];
type Name = Signer['subject'];

const headers = z.object({ 'x-request-id': z.string().max(256).optional() });

/** CmsVerificationRequest (spec leaves its fields out; docs/decisions.md, CMS signature verification). */
const cmsVerificationRequest = z.strictObject(restVerificationFields);

const v2Input = z.object({
  headers,
  body: z.strictObject({ request: cmsVerificationRequest, auditParameters: auditParametersRules.optional() }, { error: 'must be a JSON object' }),
});
type V2Input = z.output<typeof v2Input>;

const v1Input = z.object({
  headers,
  body: z.strictObject(
    {
      ...restVerificationFields,
      alias: z.string().max(256).optional(),
      auditParameters: auditParametersRules.optional(),
      businessProduct: z.string().max(256).optional(),
      /** CryptoNetDto: accepted, not used (verification is in-process, no crypto network is consulted). */
      cryptoNet: z.looseObject({}).optional(),
    },
    { error: 'must be a JSON object' },
  ),
});
type V1Input = z.output<typeof v1Input>;

function audit(parameters: AuditParameters | undefined, requestId: string | undefined): AuditParameters | undefined {
  const id = parameters?.requestId ?? requestId;
  if (!parameters && id === undefined) return undefined;
  return { ...parameters, ...(id !== undefined && { requestId: id }) };
}

/** The 7.2 value a rejected request carries: audit parameters, then undecodable data, else the request. */
export function failureStatus(failure: HttpFailure): string {
  const fields = (failure.fields ?? []).map((f) => f.field);
  if (failure.status >= 500) return 'VERIFICATION_ERROR';
  if (fields.some((f) => /(^|\.)(auditParameters|audit)(\.|$)/.test(f))) return 'AUDIT_PARAMETERS_ERROR';
  if (fields.some((f) => /(cms|data)Base64$/.test(f))) return 'INPUT_DATA_ERROR';
  return 'REQUEST_VALIDATION_ERROR';
}

function v2Name(n: Name) {
  return n && { name: n.rdn, commonName: n.commonName, organization: n.organization, organizationalUnit: n.organizationalUnit, country: n.country, locality: n.locality, email: n.email, attributes: n.attributes };
}

/** What v2Name makes, for the OpenAPI document. */
const v2NameShape = (name: Shape) =>
  within(
    name,
    object({
      name: data('rdn'),
      commonName: data('commonName'),
      organization: data('organization'),
      organizationalUnit: data('organizationalUnit'),
      country: data('country'),
      locality: data('locality'),
      email: data('email'),
      attributes: data('attributes'),
    }),
  );

/** What v2Body makes of a verification, for the OpenAPI document. */
const V2_BODY = named(
  'CmsVerificationResponse',
  object({
    status: data('status'),
    result: object({
      valid: data('valid'),
      message: data('message'),
      contentType: data('contentType'),
      detached: data('detached'),
      signedData: leftOutWhenNull(data('signedData')),
      auditId: data('auditId'),
      verifiedAt: data('verifiedAt'),
      signers: each(
        data('signers'),
        object({
          index: data('index'),
          status: data('status'),
          message: data('message'),
          subject: v2NameShape(data('subject')),
          issuer: v2NameShape(data('issuer')),
          serialNumber: data('serialNumber'),
          validity: object({ notBefore: data('notBefore'), notAfter: data('notAfter') }),
          signingTime: data('signingTime'),
          digestAlgorithm: data('digestAlgorithm'),
          signatureAlgorithm: data('signatureAlgorithm'),
          checks: each(data('checks'), object({ check: data('name'), valid: data('ok'), status: data('status'), message: data('message') })),
          chain: within(data('chain'), object({ valid: data('ok'), status: data('status'), message: data('message'), certificates: data('subjects') })),
        }),
      ),
    }),
  }),
  'The v2 answer: the 7.2 status and the per-signer results.',
);

export function v2Body(v: Verification) {
  return {
    status: v.status,
    result: {
      valid: v.valid,
      message: v.message,
      contentType: v.contentType,
      detached: v.detached,
      ...(v.signedData !== null && { signedData: v.signedData }),
      auditId: v.auditId,
      verifiedAt: v.verifiedAt,
      signers: v.signers.map((s) => ({
        index: s.index,
        status: s.status,
        message: s.message,
        subject: v2Name(s.subject),
        issuer: v2Name(s.issuer),
        serialNumber: s.serialNumber,
        validity: { notBefore: s.notBefore, notAfter: s.notAfter },
        signingTime: s.signingTime,
        digestAlgorithm: s.digestAlgorithm,
        signatureAlgorithm: s.signatureAlgorithm,
        checks: s.checks.map((c) => ({ check: c.name, valid: c.ok, status: c.status, message: c.message })),
        chain: s.chain && { valid: s.chain.ok, status: s.chain.status, message: s.chain.message, certificates: s.chain.subjects },
      })),
    },
  };
}

/** CertificateSubjectDto / CertificateIssuerDto. */
function v1Name(n: Name) {
  return n && { commonName: n.commonName, organization: n.organization, organizationUnit: n.organizationalUnit, country: n.country, locality: n.locality, email: n.email, distinguishedName: n.rdn };
}

/** What v1Name makes, for the OpenAPI document. */
const v1NameShape = (name: Shape, model: string) =>
  within(
    name,
    named(
      model,
      object({
        commonName: data('commonName'),
        organization: data('organization'),
        organizationUnit: data('organizationalUnit'),
        country: data('country'),
        locality: data('locality'),
        email: data('email'),
        distinguishedName: data('rdn'),
      }),
    ),
  );

/** What v1Body makes of a verification, for the OpenAPI document. */
const V1_BODY = named(
  'CheckSignResponseDto',
  object({
    status: named('StatusDto', object({ code: data('status'), message: data('message') })),
    result: either('VERIFICATION_SUCCESS', 'VERIFICATION_FAIL'),
    checkResults: flatEach(
      data('signers'),
      data('checks'),
      named(
        'CheckResultDto',
        object({
          checkType: data('name'),
          valid: data('ok'),
          code: data('status'),
          description: data('message'),
          signerIndex: outer('index'),
          certificateSubject: v1NameShape(outer('subject'), 'CertificateSubjectDto'),
          certificateIssuer: v1NameShape(outer('issuer'), 'CertificateIssuerDto'),
          certificateData: named(
            'CertificateDataDto',
            object({
              serialNumber: outer('serialNumber'),
              notBefore: outer('notBefore'),
              notAfter: outer('notAfter'),
              signingTime: outer('signingTime'),
              digestAlgorithm: outer('digestAlgorithm', 'name'),
              digestAlgorithmOid: outer('digestAlgorithm', 'oid'),
              signatureAlgorithm: outer('signatureAlgorithm', 'name'),
              signatureAlgorithmOid: outer('signatureAlgorithm', 'oid'),
              chain: orElse(outer('chain', 'subjects'), []),
            }),
          ),
        }),
      ),
    ),
    totalResultDescription: data('message'),
    valid: data('valid'),
    signedData: leftOutWhenNull(data('signedData')),
  }),
);

/** CheckSignResponseDto: StatusDto, result, CheckResultDto[] (one per check per signer), description, valid. */
export function v1Body(v: Verification) {
  return {
    status: { code: v.status, message: v.message },
    result: v.valid ? 'VERIFICATION_SUCCESS' : 'VERIFICATION_FAIL',
    checkResults: v.signers.flatMap((s) =>
      s.checks.map((c) => ({
        checkType: c.name,
        valid: c.ok,
        code: c.status,
        description: c.message,
        signerIndex: s.index,
        certificateSubject: v1Name(s.subject),
        certificateIssuer: v1Name(s.issuer),
        certificateData: {
          serialNumber: s.serialNumber,
          notBefore: s.notBefore,
          notAfter: s.notAfter,
          signingTime: s.signingTime,
          digestAlgorithm: s.digestAlgorithm.name,
          digestAlgorithmOid: s.digestAlgorithm.oid,
          signatureAlgorithm: s.signatureAlgorithm.name,
          signatureAlgorithmOid: s.signatureAlgorithm.oid,
          chain: s.chain?.subjects ?? [],
        },
      })),
    ),
    totalResultDescription: v.message,
    valid: v.valid,
    ...(v.signedData !== null && { signedData: v.signedData }),
  };
}

/** The values failureStatus chooses from. */
const FAILURE_STATUS = either('VERIFICATION_ERROR', 'AUDIT_PARAMETERS_ERROR', 'INPUT_DATA_ERROR', 'REQUEST_VALIDATION_ERROR');

/** What v2Error makes of a failure, for the OpenAPI document. */
const V2_ERROR = named(
  'CmsVerificationError',
  object({ status: FAILURE_STATUS, result: object({ valid: literal(false), message: data('message'), code: data('code'), errors: orElse(data('fields'), []) }) }),
  'A request the v2 paths refuse: the 7.2 status of the refusal, and every bad field.',
);

/** What v1Error makes of a failure, for the OpenAPI document. */
const V1_ERROR = named(
  'CheckSignError',
  object({
    status: object({
      code: FAILURE_STATUS,
      message: data('message'),
      errorDetails: each(orElse(data('fields'), []), named('ErrorDetailDto', object({ field: data('field'), message: data('message') }))),
    }),
    result: literal('VERIFICATION_FAIL'),
    checkResults: literal([]),
    totalResultDescription: data('message'),
    valid: literal(false),
  }),
  'A request the v1 path refuses: CheckSignResponseDto with the 7.2 status of the refusal and an ErrorDetailDto per bad field.',
);

function v2Error(failure: HttpFailure) {
  return { status: failureStatus(failure), result: { valid: false, message: failure.message, code: failure.code, errors: failure.fields ?? [] } };
}

function v1Error(failure: HttpFailure) {
  const status = failureStatus(failure);
  return {
    status: { code: status, message: failure.message, errorDetails: (failure.fields ?? []).map((f) => ({ field: f.field, message: f.message })) },
    result: 'VERIFICATION_FAIL',
    checkResults: [],
    totalResultDescription: failure.message,
    valid: false,
  };
}

function v2Route(profile: 'CLOUD' | 'TECH', path: `/${string}`): HttpRoute {
  return httpRoute({
    area: 'signatures',
    method: 'POST',
    path,
    summary: `Verifies a CMS signature against the ${profile.toLowerCase()} trust profile; answers the 7.2 status and per-signer results.`,
    input: v2Input,
    document: op.VerifyCmsDocument,
    variables: (i: V2Input) => {
      const a = audit(i.body.auditParameters, i.headers['x-request-id']);
      return { input: { profile, ...i.body.request, ...(a && { audit: a }) } };
    },
    respond: (d) => ({ body: v2Body(d.verifyCms) }),
    errorBody: v2Error,
    answer: { body: within(data('verifyCms'), V2_BODY), error: V2_ERROR },
  });
}

export function signatureRoutes(_config: Config): HttpRoute[] {
  return [
    v2Route('CLOUD', '/v2/verify/cms/cloud'),
    v2Route('TECH', '/v2/verify/cms/tech'),
    httpRoute({
      area: 'signatures',
      method: 'POST',
      path: '/v1/checkSign/cms',
      summary: 'Verifies a CMS signature against the default trust profile (v1 CheckSignResponseDto).',
      input: v1Input,
      document: op.VerifyCmsDocument,
      variables: (i: V1Input) => {
        const { auditParameters, cryptoNet: _unused, ...rest } = i.body;
        const a = audit(auditParameters, i.headers['x-request-id']);
        return { input: { profile: 'DEFAULT' as const, ...rest, ...(a && { audit: a }) } };
      },
      respond: (d) => ({ body: v1Body(d.verifyCms) }),
      errorBody: v1Error,
      answer: { body: within(data('verifyCms'), V1_BODY), error: V1_ERROR },
    }),
  ];
}
