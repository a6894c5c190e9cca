import { z } from 'zod';
import type { Config } from '../config.js';
import { auditParametersRules, restVerificationFields, type AuditParameters } from '../signatures/signature-rules.js';
import * as op from '../generated/graphql/graphql.js';
import { httpRoute, type HttpFailure, type HttpRoute } from './http-route.js';

// Spec 4.4: POST /v2/verify/cms/{cloud,tech} and POST /v1/checkSign/cms. All three run the VerifyCms
// operation; v1 and v2 shapes are built from its one typed result. Verification outcomes answer 200 with
// the status inside; malformed requests answer 400 in the same envelope.

type Verification = op.LegacyCmsVerificationFragment;
type Signer = Verification['signers'][number];
type Name = Signer['subject'];

const headers = z.object({ 'x-request-id': z.string().max(256).optional() });

/** CmsVerificationRequest (spec leaves its fields out; docs/notes/signatures.md). */
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
    }),
  ];
}
