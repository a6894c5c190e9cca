import { builder } from './builder.js';
import { defineConnection, dropNulls, pageArgs, toConnection, validate, windowFromArgs } from './common.js';
import { SIGNATURE_STATUS_VALUES, type SignatureStatus } from '../signatures/statuses.js';
import { auditFilterRules, fingerprint, trustedRootPem, verifyCmsRules } from '../signatures/signature-rules.js';
import { findVerificationAudits, verifyAndRecord, type Verification } from '../signatures/signatures.js';
import { toPem, type TrustAnchor } from '../signatures/trust.js';
import type { AlgorithmInfo, SignerChain, SignerCheck, SignerReport } from '../signatures/verify.js';
import type { CertificateName as CertName } from '../signatures/names.js';

// Area E: CMS signature verification (verifyCms), its audit trail and the trust anchors per profile.

const STATUS_MEANING: Partial<Record<SignatureStatus, string>> = {
  VERIFICATION_SUCCESS: 'Every signature, message digest, certificate validity and chain check passed.',
  INPUT_DATA_ERROR: 'The CMS or the data could not be decoded (base64, DER, structure).',
  CERTIFICATE_CHAIN_BUILDING_ERROR: 'No path from a signer certificate to a trust anchor of the profile.',
  CERTIFICATE_CHAIN_VALIDATION_ERROR: 'A path exists but a link is broken (signature, CA flag, validity).',
  CERTIFICATE_CHAIN_IS_VALID: 'A signer chain reached a trust anchor and every link is valid.',
  CERTIFICATE_ERROR: 'A signer certificate is not valid at the check time.',
  INVALID_SIGNATURE_ERROR: 'A signature value does not verify.',
  REQUEST_VALIDATION_ERROR: 'The request is malformed (REST envelope, HTTP 400).',
  AUDIT_PARAMETERS_ERROR: 'The audit parameters are malformed (REST envelope, HTTP 400).',
};

const SignatureStatusEnum = builder.enumType('SignatureStatus', {
  description: 'Verification status values of spec 7.2; docs/api.md (Verification statuses) says which ones the verifier reaches.',
  values: Object.fromEntries(
    SIGNATURE_STATUS_VALUES.map((v) => [v, { description: STATUS_MEANING[v] ?? `Spec 7.2 value ${v}.` }]),
  ) as Record<SignatureStatus, { description: string }>,
});

export const TrustProfileEnum = builder.enumType('TrustProfile', {
  description: 'A set of trust anchors: DEFAULT (v1 path), CLOUD and TECH (the v2 paths).',
  values: {
    DEFAULT: { description: 'Anchors of TRUST_DIR and those added for DEFAULT.' },
    CLOUD: { description: 'Anchors of TRUST_DIR_CLOUD (else TRUST_DIR) and those added for CLOUD.' },
    TECH: { description: 'Anchors of TRUST_DIR_TECH (else TRUST_DIR) and those added for TECH.' },
  },
});

const DigestParameterEnum = builder.enumType('DigestParameter', {
  description: 'The digest every signer must use, when given.',
  values: {
    HASH_GOST3411_94: { description: 'GOST R 34.11-94.' },
    HASH_GOST3411_2012_256: { description: 'GOST R 34.11-2012 (Streebog), 256 bits.' },
    HASH_GOST3411_2012_512: { description: 'GOST R 34.11-2012 (Streebog), 512 bits.' },
  },
});

const CheckNameEnum = builder.enumType('SignatureCheckName', {
  description: 'The checks made for each signer.',
  values: {
    SIGNATURE: { description: 'The signature value over the signed attributes (or content).' },
    MESSAGE_DIGEST: { description: 'The message-digest attribute equals the digest of the content.' },
    CERTIFICATE_VALIDITY: { description: 'The signer certificate is valid at the check time.' },
    CHAIN: { description: 'A valid path from the signer certificate to a trust anchor of the profile.' },
  },
});

const TrustSourceEnum = builder.enumType('TrustSource', {
  description: 'Where a trust anchor comes from.',
  values: {
    DIRECTORY: { description: 'A PEM file of the profile directory (remove it there and restart).' },
    API: { description: 'Added with addTrustedRoot.' },
  },
});

const CertificateNameRef = builder.objectRef<CertName>('CertificateName').implement({
  description: 'A distinguished name of a certificate.',
  fields: (t) => ({
    rdn: t.exposeString('rdn', { description: 'RFC 4514 form, most specific first (CN=...,O=...,C=...).' }),
    attributes: t.field({ type: 'JSON', description: 'Attribute short name (or OID) -> value.', resolve: (n) => n.attributes }),
    commonName: t.string({ nullable: true, description: 'CN.', resolve: (n) => n.attributes.CN ?? null }),
    organization: t.string({ nullable: true, description: 'O.', resolve: (n) => n.attributes.O ?? null }),
    organizationalUnit: t.string({ nullable: true, description: 'OU.', resolve: (n) => n.attributes.OU ?? null }),
    country: t.string({ nullable: true, description: 'C.', resolve: (n) => n.attributes.C ?? null }),
    locality: t.string({ nullable: true, description: 'L.', resolve: (n) => n.attributes.L ?? null }),
    email: t.string({ nullable: true, description: 'E (emailAddress).', resolve: (n) => n.attributes.E ?? null }),
  }),
});

const AlgorithmRef = builder.objectRef<AlgorithmInfo>('SignatureAlgorithmInfo').implement({
  description: 'An algorithm by OID and name.',
  fields: (t) => ({
    oid: t.exposeString('oid', { description: 'Object identifier.' }),
    name: t.exposeString('name', { description: 'Name (the OID when unknown).' }),
  }),
});

const CheckRef = builder.objectRef<SignerCheck>('SignerCheck').implement({
  description: 'One check of one signer.',
  fields: (t) => ({
    name: t.field({ type: CheckNameEnum, description: 'Which check.', resolve: (c) => c.name }),
    ok: t.exposeBoolean('ok', { description: 'The check passed.' }),
    status: t.field({ type: SignatureStatusEnum, description: 'VERIFICATION_SUCCESS, or the status this failure contributes.', resolve: (c) => c.status }),
    message: t.exposeString('message', { description: 'Human-readable outcome.' }),
  }),
});

const ChainRef = builder.objectRef<SignerChain>('SignerChain').implement({
  description: 'The path from a signer certificate to a trust anchor.',
  fields: (t) => ({
    ok: t.exposeBoolean('ok', { description: 'The path reaches an anchor and every link is valid.' }),
    status: t.field({ type: SignatureStatusEnum, description: 'CERTIFICATE_CHAIN_IS_VALID or the chain error.', resolve: (c) => c.status }),
    message: t.exposeString('message', { description: 'Human-readable outcome.' }),
    subjects: t.exposeStringList('subjects', { description: 'RFC 4514 subjects from the signer up to the anchor, as far as built.' }),
  }),
});

const date = (s: string | null): Date | null => (s === null ? null : new Date(s));

const SignerRef = builder.objectRef<SignerReport>('CmsSigner').implement({
  description: 'One signer of the CMS and the outcome of its checks.',
  fields: (t) => ({
    index: t.exposeInt('index', { description: 'Position among the SignerInfos, from 0.' }),
    status: t.field({ type: SignatureStatusEnum, description: 'VERIFICATION_SUCCESS or the first failure by precedence.', resolve: (s) => s.status }),
    message: t.exposeString('message', { description: 'Human-readable outcome.' }),
    subject: t.field({ type: CertificateNameRef, nullable: true, description: 'Subject of the signer certificate (null when absent).', resolve: (s) => s.subject }),
    issuer: t.field({ type: CertificateNameRef, nullable: true, description: 'Issuer of the signer certificate.', resolve: (s) => s.issuer }),
    serialNumber: t.string({ nullable: true, description: 'Serial number, lower-case hex.', resolve: (s) => s.serialNumber }),
    notBefore: t.field({ type: 'DateTime', nullable: true, description: 'Start of the certificate validity.', resolve: (s) => date(s.notBefore) }),
    notAfter: t.field({ type: 'DateTime', nullable: true, description: 'End of the certificate validity.', resolve: (s) => date(s.notAfter) }),
    signingTime: t.field({ type: 'DateTime', nullable: true, description: 'The signing-time attribute, when signed.', resolve: (s) => date(s.signingTime) }),
    digestAlgorithm: t.field({ type: AlgorithmRef, description: 'Digest algorithm of the signer.', resolve: (s) => s.digestAlgorithm }),
    signatureAlgorithm: t.field({ type: AlgorithmRef, description: 'Signature algorithm of the signer.', resolve: (s) => s.signatureAlgorithm }),
    checks: t.field({ type: [CheckRef], description: 'Every check made, in order.', resolve: (s) => s.checks }),
    chain: t.field({ type: ChainRef, nullable: true, description: 'The chain result (null without a signer certificate).', resolve: (s) => s.chain }),
  }),
});

const VerificationRef = builder.objectRef<Verification>('CmsVerification').implement({
  description: 'The outcome of one CMS verification.',
  fields: (t) => ({
    status: t.field({ type: SignatureStatusEnum, description: 'Spec 7.2 status: VERIFICATION_SUCCESS or the reason of the failure.', resolve: (v) => v.report.status }),
    valid: t.boolean({ description: 'True only for VERIFICATION_SUCCESS.', resolve: (v) => v.report.valid }),
    message: t.string({ description: 'Human-readable outcome.', resolve: (v) => v.report.message }),
    contentType: t.string({ nullable: true, description: 'eContentType OID, when the SignedData was read.', resolve: (v) => v.report.contentType }),
    detached: t.boolean({ nullable: true, description: 'The signature is detached (content given as data).', resolve: (v) => v.report.detached }),
    signedData: t.string({ nullable: true, description: 'The signed content, base64, only with needSignedData.', resolve: (v) => v.report.signedData ?? null }),
    signers: t.field({ type: [SignerRef], description: 'Every signer, in SignerInfo order.', resolve: (v) => v.report.signers }),
    auditId: t.id({ description: 'Identifier of the audit record of this verification.', resolve: (v) => v.audit.id }),
    verifiedAt: t.field({ type: 'DateTime', description: 'When the verification was made.', resolve: (v) => v.audit.createdAt }),
  }),
});

const AuditCertificateRef = builder
  .objectRef<{ index: number; subject: string | null; issuer: string | null; serialNumber: string | null; status: string }>('AuditedCertificate')
  .implement({
    description: 'What an audit record keeps of a signer.',
    fields: (t) => ({
      index: t.exposeInt('index', { description: 'Signer position, from 0.' }),
      subject: t.exposeString('subject', { nullable: true, description: 'RFC 4514 subject.' }),
      issuer: t.exposeString('issuer', { nullable: true, description: 'RFC 4514 issuer.' }),
      serialNumber: t.exposeString('serialNumber', { nullable: true, description: 'Serial number, hex.' }),
      status: t.exposeString('status', { description: 'Status of this signer.' }),
    }),
  });

export const VerificationAuditRef = builder.prismaObject('VerificationAudit', {
  description: 'One verification as audited: who asked, when, which certificates, the outcome; never the signed data.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Identifier.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the verification was made.' }),
    profile: t.field({ type: TrustProfileEnum, description: 'Trust profile used.', resolve: (a) => a.profile }),
    userId: t.exposeString('userId', { nullable: true, description: 'auditParameters.userId (the API key principal once access control lands).' }),
    systemId: t.exposeString('systemId', { nullable: true, description: 'auditParameters.systemId.' }),
    clientIp: t.exposeString('clientIp', { nullable: true, description: 'auditParameters.clientIp.' }),
    requestId: t.exposeString('requestId', { nullable: true, description: 'auditParameters.requestId, else the X-Request-Id header of a REST call.' }),
    alias: t.exposeString('alias', { nullable: true, description: 'v1 alias.' }),
    businessProduct: t.exposeString('businessProduct', { nullable: true, description: 'v1 businessProduct.' }),
    status: t.exposeString('status', { description: 'Spec 7.2 status of the verification.' }),
    valid: t.exposeBoolean('valid', { description: 'The verification succeeded.' }),
    message: t.exposeString('message', { description: 'Outcome message.' }),
    certificates: t.field({
      type: [AuditCertificateRef],
      description: 'The signer certificates (subject, issuer, serial) and their statuses.',
      resolve: (a) => a.certificates as never,
    }),
    checkTime: t.expose('checkTime', { type: 'DateTime', nullable: true, description: 'The requested check time, if any.' }),
    durationMs: t.exposeInt('durationMs', { description: 'Time spent, milliseconds.' }),
  }),
});

const AuditConnection = defineConnection('VerificationAudit', VerificationAuditRef, 'verification audit record');

const TrustedRootRef = builder.objectRef<TrustAnchor>('TrustedRoot').implement({
  description: 'A trust anchor of a profile.',
  fields: (t) => ({
    profile: t.field({ type: TrustProfileEnum, description: 'The profile it belongs to.', resolve: (r) => r.profile }),
    source: t.field({ type: TrustSourceEnum, description: 'Directory file or API.', resolve: (r) => r.source }),
    fingerprint: t.exposeString('fingerprint', { description: 'SHA-256 of the DER, lower-case hex.' }),
    subject: t.exposeString('subject', { description: 'RFC 4514 subject.' }),
    notAfter: t.expose('notAfter', { type: 'DateTime', description: 'End of validity.' }),
    addedAt: t.expose('addedAt', { type: 'DateTime', nullable: true, description: 'When it was added through the API (null for directory roots).' }),
    pem: t.string({ description: 'The certificate, PEM.', resolve: (r) => toPem(r.der) }),
  }),
});

const CustomParameterInput = builder.inputType('CustomParameterInput', {
  description: 'A name/value pair of the caller (not stored).',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Name.' }),
    value: t.string({ required: true, description: 'Value.' }),
  }),
});

const AuditParametersInput = builder.inputType('AuditParametersInput', {
  description: 'Who asks for the verification (AuditParameters of the spec).',
  fields: (t) => ({
    userId: t.string({ description: 'The end user.' }),
    systemId: t.string({ description: 'The calling system.' }),
    clientIp: t.string({ description: 'The end user address.' }),
    requestId: t.string({ description: 'Correlation id.' }),
    customParameters: t.field({ type: [CustomParameterInput], description: 'Extra pairs (validated, not stored).' }),
  }),
});

const CmsVerificationInput = builder.inputType('CmsVerificationInput', {
  description: 'A CMS signature to verify.',
  fields: (t) => ({
    profile: t.field({ type: TrustProfileEnum, description: 'Trust profile (default DEFAULT).' }),
    cmsBase64: t.string({ required: true, description: 'DER CMS SignedData, base64 (PEM armour tolerated).' }),
    dataBase64: t.string({ description: 'The signed content of a detached signature, base64; empty or absent for attached ones.' }),
    checkTime: t.field({ type: 'DateTime', description: 'Time at which the certificates must be valid (default now).' }),
    digestParameter: t.field({ type: DigestParameterEnum, description: 'When given, every signer must use this digest.' }),
    needSignedData: t.boolean({ description: 'Return the signed content in signedData.' }),
    alias: t.string({ description: 'v1 alias (kept in the audit record).' }),
    businessProduct: t.string({ description: 'v1 businessProduct (kept in the audit record).' }),
    audit: t.field({ type: AuditParametersInput, description: 'Who asks (kept in the audit record).' }),
  }),
});

const AuditFilterInput = builder.inputType('VerificationAuditFilter', {
  description: 'Conditions an audit record must meet; all given conditions apply.',
  fields: (t) => ({
    userId: t.string({ description: 'userId equals this.' }),
    systemId: t.string({ description: 'systemId equals this.' }),
    requestId: t.string({ description: 'requestId equals this.' }),
    status: t.field({ type: SignatureStatusEnum, description: 'status equals this.' }),
    valid: t.boolean({ description: 'valid equals this.' }),
    profile: t.field({ type: TrustProfileEnum, description: 'profile equals this.' }),
    from: t.field({ type: 'DateTime', description: 'Made at or after this instant.' }),
    to: t.field({ type: 'DateTime', description: 'Made before this instant.' }),
  }),
});

builder.mutationFields((t) => ({
  verifyCms: t.field({
    type: VerificationRef,
    extensions: { scope: 'signatures:verify' },
    description: 'Verifies a CMS SignedData against the trust anchors of a profile and records an audit entry.',
    args: { input: t.arg({ type: CmsVerificationInput, required: true, description: 'The signature and who asks.' }) },
    resolve: (_root, args, ctx) => {
      const raw = dropNulls(args.input);
      if (args.input.audit) raw.audit = dropNulls(args.input.audit);
      return verifyAndRecord(ctx, validate(verifyCmsRules, raw, 'input'));
    },
  }),
  addTrustedRoot: t.field({
    type: TrustedRootRef,
    extensions: { scope: 'admin:all' },
    description: 'Adds a trust anchor to a profile; CONFLICT when it is already there.',
    args: {
      profile: t.arg({ type: TrustProfileEnum, required: true, description: 'The profile.' }),
      pem: t.arg.string({ required: true, description: 'One X.509 certificate, PEM (or base64 DER).' }),
    },
    resolve: (_root, args, ctx) => ctx.trust.addRoot(args.profile, validate(trustedRootPem, args.pem, 'pem')),
  }),
  removeTrustedRoot: t.field({
    type: TrustedRootRef,
    extensions: { scope: 'admin:all' },
    description: 'Removes a trust anchor added through the API and returns it.',
    args: {
      profile: t.arg({ type: TrustProfileEnum, required: true, description: 'The profile.' }),
      fingerprint: t.arg.string({ required: true, description: 'SHA-256 fingerprint, hex.' }),
    },
    resolve: (_root, args, ctx) => ctx.trust.removeRoot(args.profile, validate(fingerprint, args.fingerprint.toLowerCase(), 'fingerprint')),
  }),
}));

builder.queryFields((t) => ({
  trustedRoots: t.field({
    type: [TrustedRootRef],
    extensions: { scope: 'admin:all' },
    description: 'The trust anchors of a profile: directory files first, then those added through the API.',
    args: { profile: t.arg({ type: TrustProfileEnum, required: true, description: 'The profile.' }) },
    resolve: (_root, args, ctx) => ctx.trust.anchors(args.profile),
  }),
  verificationAudits: t.field({
    type: AuditConnection,
    extensions: { scope: 'signatures:read' },
    description: 'Audit records of verifications, newest first, a page at a time.',
    args: { filter: t.arg({ type: AuditFilterInput, description: 'Conditions on the records.' }), ...pageArgs(t.arg) },
    resolve: async (_root, args, ctx, info) => {
      const page = await findVerificationAudits(ctx.db, validate(auditFilterRules, dropNulls(args.filter), 'filter'), windowFromArgs(ctx, args, info));
      return toConnection(page);
    },
  }),
}));
