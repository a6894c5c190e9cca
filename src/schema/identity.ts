import type { Person, Prisma } from '../generated/prisma/client.js';
import type { GraphQLContext } from './context.js';
import { builder } from './builder.js';
import { plannedQuery } from './planned-query.js';
import { validate } from './common.js';
import * as identity from '../identity/identity.js';
import { employmentPageRule, oidRule } from '../identity/identity-rules.js';
import { filterPerson, ORGANIZATIONS_SCOPE, parseScopes, requireScope, withinConsent, type GrantedScopes } from '../identity/scopes.js';
import { assertOwnOrganization, assertOwnPerson, IDENTITY_READ_SCOPE, ownPersonOnly } from '../access/own-records.js';
import { ForbiddenError } from '../errors.js';
import { objectSlot } from '../kit/object-slot.js';

// Identity data (area A): persons, their organizations, groups and employments, and organizations with members.
// X-IdpScopes (a request header, forwarded by the legacy paths), within a token's consented scopes, decides which
// person fields are released; a token bound to a person without identity:read reads only that person's records.

const grantedByContext = objectSlot<object, GrantedScopes>('granted scopes');

/**
 * The caller's X-IdpScopes, parsed once per operation, within its consent (a token's); no header and no consent
 * means no restriction, a header not known means refusal.
 */
function scopesOf(ctx: GraphQLContext): GrantedScopes {
  // null is a scope set too (no restriction): only undefined means not parsed yet.
  const granted = grantedByContext.get(ctx);
  if (granted !== undefined) return granted;
  if (ctx.idpScopes === undefined) throw new ForbiddenError('identity data is refused: the X-IdpScopes of this caller cannot be determined');
  const scopes = withinConsent(parseScopes(ctx.idpScopes), ctx.principal?.idpConsent ?? null);
  grantedByContext.set(ctx, scopes);
  return scopes;
}

// The view is kept with the scopes it was filtered for: a row object is never meant to be shared between operations,
// but if one ever were, another caller's view would be filtered anew, never handed on.
const filteredByPerson = objectSlot<Person, { scopes: GrantedScopes; view: Partial<identity.PersonView> }>('released view');

/** The person as the granted scopes release it (one filter for GraphQL and REST: src/identity/scopes.ts). */
function released(person: Person, ctx: GraphQLContext): Partial<identity.PersonView> {
  const scopes = scopesOf(ctx);
  const known = filteredByPerson.get(person);
  if (known?.scopes === scopes) return known.view;
  const view = filterPerson(identity.personView(person), scopes);
  filteredByPerson.set(person, { scopes, view });
  return view;
}

type Query = { include?: Record<string, unknown>; select?: Record<string, unknown> };
type PersonQuery = Omit<Prisma.PersonFindFirstArgs, 'where'> & Query;
type OrganizationQuery = Omit<Prisma.OrganizationFindFirstArgs, 'where'> & Query;

/** Organizations, groups and employments of a person need the usr_org scope. */
function checkRelationScopes(query: Query, ctx: GraphQLContext, what: string): void {
  const wanted = { ...query.include, ...query.select };
  if ('memberships' in wanted || 'groupMemberships' in wanted || '_count' in wanted) {
    requireScope(scopesOf(ctx), ORGANIZATIONS_SCOPE, what);
  }
}

const PersonRef = builder.prismaObject('Person', {
  description: 'A natural person of the state identity provider (spec 2.3; ESIA `prns`). Fields outside the granted X-IdpScopes are null.',
  fields: (t) => {
    const text = (field: 'firstName' | 'lastName' | 'middleName' | 'birthDate' | 'birthPlace' | 'gender' | 'citizenship' | 'snils' | 'inn' | 'status' | 'eTag' | 'etag', description: string) =>
      t.string({ nullable: true, description, resolve: (p, _a, ctx) => released(p, ctx)[field] ?? null });
    const flag = (field: 'trusted' | 'rfgUOperatorCheck' | 'verifying' | 'containsUpCfmCode', description: string) =>
      t.boolean({ nullable: true, description, resolve: (p, _a, ctx) => released(p, ctx)[field] ?? null });
    const long = (field: 'updatedOn' | 'rIdDoc' | 'ridDoc', description: string) =>
      t.float({ nullable: true, description, resolve: (p, _a, ctx) => released(p, ctx)[field] ?? null });
    const list = (field: 'stateFacts' | 'links', description: string) =>
      t.stringList({ nullable: true, description, resolve: (p, _a, ctx) => released(p, ctx)[field] ?? null });
    return {
      oid: t.exposeString('oid', { description: 'Identifier of the person at the identity provider (digits).' }),
      stateFacts: list('stateFacts', 'State facts of the record (ESIA: EntityRoot).'),
      firstName: text('firstName', 'First name (scope fullname).'),
      lastName: text('lastName', 'Last name (scope fullname).'),
      middleName: text('middleName', 'Patronymic (scope fullname).'),
      birthDate: text('birthDate', 'Date of birth, dd.MM.yyyy (scope birthdate).'),
      birthPlace: text('birthPlace', 'Place of birth (scope birthplace).'),
      gender: text('gender', 'M or F (scope gender).'),
      trusted: flag('trusted', 'The account is confirmed (verified identity).'),
      rfgUOperatorCheck: flag('rfgUOperatorCheck', 'The identity was checked by an operator of the unified register.'),
      citizenship: text('citizenship', 'Citizenship, ISO 3166-1 alpha-3 (scope citizenship).'),
      snils: text('snils', 'Insurance number SNILS, 000-000-000 00 (scope snils).'),
      inn: text('inn', 'Taxpayer number INN, 12 digits (scope inn).'),
      updatedOn: long('updatedOn', 'When the record last changed, seconds since 1970 (int64).'),
      status: text('status', 'Account status: REGISTERED or DELETED.'),
      verifying: flag('verifying', 'The record is being verified now.'),
      rIdDoc: long('rIdDoc', 'Identifier of the identity document, int64 (scope id_doc).'),
      ridDoc: long('ridDoc', 'The same as rIdDoc, as the spec also lists it (scope id_doc).'),
      containsUpCfmCode: flag('containsUpCfmCode', 'The person holds an unconfirmed confirmation code.'),
      eTag: text('eTag', 'Version tag of the record as this caller sees it: made from the fields released to it, so it changes whenever they do, and never with a field withheld.'),
      etag: text('etag', 'The same as eTag, as the spec also lists it.'),
      links: list('links', 'Paths of the legacy lists about this person.'),
      organizations: t.relation('memberships', {
        description: 'The person\'s organizations with the person\'s position and flags in each (needs scope usr_org).',
        query: { orderBy: { organizationOid: 'asc' } },
      }),
      groups: t.relation('groupMemberships', {
        description: 'The organization groups the person belongs to (needs scope usr_org).',
        query: { orderBy: { grpId: 'asc' } },
      }),
      employments: t.relation('memberships', {
        description: 'The person\'s employments, a page at a time, oldest record first (needs scope usr_org).',
        args: {
          pageSize: t.arg.int({ description: 'Page size (default DEFAULT_PAGE_SIZE, at most MAX_PAGE_SIZE).' }),
          pageIndex: t.arg.int({ description: 'Page number, 1-based as in ESIA (default 1).' }),
        },
        query: (args, ctx) => {
          const page = validate(employmentPageRule(ctx.config.MAX_PAGE_SIZE, ctx.config.DEFAULT_PAGE_SIZE), { pageSize: args.pageSize ?? undefined, pageIndex: args.pageIndex ?? undefined });
          return { orderBy: { id: 'asc' }, skip: (page.pageIndex - 1) * page.pageSize, take: page.pageSize };
        },
      }),
      employmentCount: t.relationCount('memberships', { description: 'Number of the person\'s employments, across all pages (needs scope usr_org).' }),
    };
  },
});

// Employments and organizations load only the columns a query selects (Pothos' select mode); a person loads whole,
// since what X-IdpScopes releases of it is decided over the whole record (released()).
builder.prismaObject('PersonOrganization', {
  name: 'Employment',
  description: 'A person\'s employment in an organization (ESIA `emps`).',
  fields: (t) => ({
    position: t.exposeString('position', { nullable: true, description: 'Position held.' }),
    role: t.exposeString('role', { nullable: true, description: 'Role in the organization (employee, chief, ...).' }),
    chief: t.exposeBoolean('chief', { description: 'The person heads the organization.' }),
    admin: t.exposeBoolean('admin', { description: 'The person administers the organization\'s profile.' }),
    active: t.exposeBoolean('active', { description: 'The employment is current.' }),
    email: t.exposeString('email', { nullable: true, description: 'Work e-mail.' }),
    phone: t.exposeString('phone', { nullable: true, description: 'Work phone.' }),
    startDate: t.expose('startDate', { type: 'DateTime', nullable: true, description: 'When the employment began.' }),
    endDate: t.expose('endDate', { type: 'DateTime', nullable: true, description: 'When the employment ended.' }),
    organization: t.relation('organization', { description: 'The organization.' }),
    person: t.relation('person', { description: 'The employed person.' }),
  }),
});

builder.prismaObject('PersonGroup', {
  name: 'GroupMembership',
  description: 'A person\'s membership in an organization group.',
  fields: (t) => ({
    group: t.relation('group', { description: 'The group.' }),
    person: t.relation('person', { description: 'The member.' }),
  }),
});

builder.prismaObject('OrganizationGroup', {
  description: 'An access group of an organization (ESIA `grps`).',
  fields: (t) => ({
    grpId: t.exposeString('grpId', { description: 'Identifier of the group.' }),
    name: t.exposeString('name', { description: 'Name of the group.' }),
    description: t.exposeString('description', { description: 'What the group is for.' }),
    itSystem: t.exposeString('itSystem', { nullable: true, description: 'The information system the group grants access to.' }),
    organization: t.relation('organization', { description: 'The organization the group belongs to.' }),
  }),
});

const OrganizationRef = builder.prismaObject('Organization', {
  description: 'An organization of the identity provider (ESIA `orgs`).',
  fields: (t) => ({
    oid: t.exposeString('oid', { description: 'Identifier of the organization (digits).' }),
    shortName: t.exposeString('shortName', { description: 'Short name.' }),
    fullName: t.exposeString('fullName', { description: 'Full name.' }),
    type: t.exposeString('type', { description: 'LEGAL, BUSINESS or AGENCY.' }),
    ogrn: t.exposeString('ogrn', { nullable: true, description: 'Primary state registration number OGRN.' }),
    inn: t.exposeString('inn', { nullable: true, description: 'Taxpayer number INN.' }),
    kpp: t.exposeString('kpp', { nullable: true, description: 'Tax registration reason code KPP.' }),
    leg: t.exposeString('leg', { nullable: true, description: 'Legal form code (OKOPF).' }),
    active: t.exposeBoolean('active', { description: 'The organization is active.' }),
    members: t.relation('memberships', {
      description: 'Employments in this organization, with the employed persons (a caller bound to a person sees that person\'s alone).',
      query: (_args, ctx) => {
        const own = ownPersonOnly(ctx.principal);
        return { orderBy: { personOid: 'asc' }, ...(own !== null && { where: { personOid: own } }) };
      },
    }),
    groups: t.relation('groups', { description: 'Access groups of the organization.', query: { orderBy: { grpId: 'asc' } } }),
  }),
});

builder.queryFields((t) => ({
  // Planned once per document (src/schema/planned-query.ts) and after the argument and the caller are checked.
  person: t.field({
    type: PersonRef,
    extensions: { scope: IDENTITY_READ_SCOPE, ownRecords: true },
    description:
      'One person by oid; NOT_FOUND when unknown. Fields outside the X-IdpScopes header (within a token\'s consented scopes) are null; an unknown scope is BAD_USER_INPUT. A token bound to a person without identity:read reads only that person.',
    args: { oid: t.arg.string({ required: true, description: 'Identifier of the person (digits).' }) },
    resolve: (_root, args, ctx, info) => {
      const oid = validate(oidRule, args.oid, 'oid');
      assertOwnPerson(ctx.principal, oid);
      scopesOf(ctx);
      const query = plannedQuery<PersonQuery>(ctx, info);
      checkRelationScopes(query, ctx, 'the person\'s organizations');
      return identity.getPerson(ctx.db, oid, query);
    },
  }),
  organization: t.field({
    type: OrganizationRef,
    extensions: { scope: IDENTITY_READ_SCOPE, ownRecords: true },
    description:
      'One organization by oid; NOT_FOUND when unknown. `members` needs scope usr_org; member persons are filtered by X-IdpScopes like `person`. A token bound to a person without identity:read reads only the person\'s own organizations.',
    args: { oid: t.arg.string({ required: true, description: 'Identifier of the organization (digits).' }) },
    resolve: async (_root, args, ctx, info) => {
      const oid = validate(oidRule, args.oid, 'oid');
      scopesOf(ctx);
      const query = plannedQuery<OrganizationQuery>(ctx, info);
      checkRelationScopes(query, ctx, 'the organization\'s members');
      await assertOwnOrganization(ctx.db, ctx.principal, oid);
      return identity.getOrganization(ctx.db, oid, query);
    },
  }),
}));
