import { z } from 'zod';
import type { Config } from '../../config.js';
import { matchesETag } from '../../identity/identity.js';
import { oidRule } from '../../identity/identity-rules.js';
import { SCOPES, unknownScopes } from '../../identity/scopes.js';
import * as op from '../../generated/graphql/graphql.js';
import { defaultErrorBody, httpRoute, type HttpRoute } from './http-route.js';
import * as shape from './answer-shape.js';
import { DEFAULT_ERROR } from './error-shapes.js';

// Spec 4.1, the four identity GET paths. `oid` is the person's oid on all four (ESIA `prns/{oid}/...`); fields
// outside the granted X-IdpScopes come back null from GraphQL and are left out here.

const scopesHeader = z
  .string()
  .refine((h) => unknownScopes(h).length === 0, { message: `names an unknown scope; known: ${SCOPES.join(', ')}` })
  .optional();

const headers = z.object({ 'x-idpscopes': scopesHeader, 'if-none-match': z.string().optional() });
const byOid = z.object({ query: z.object({ oid: oidRule }), headers });

/** Absent means "not released" (or simply not recorded): the legacy answers leave such fields out, as ESIA does. */
function present<T extends object>(record: T): Partial<T> {
  // A loop, not Object.entries/filter/fromEntries: three arrays per element were ~1.5% of a nested legacy read.
  const kept: Partial<T> = {};
  for (const key in record) if (record[key] !== null && record[key] !== undefined) kept[key] = record[key];
  return kept;
}

/** ESIA collections: `stateFacts: ["hasSize"]`, `size`, `elements`, and no links. */
const collection = <T>(elements: T[]) => ({ stateFacts: ['hasSize'], size: elements.length, elements, links: [] as string[] });
/** What `collection` makes, for the OpenAPI document. */
const collectionShape = (elements: shape.Shape) => shape.object({ stateFacts: shape.literal(['hasSize']), size: shape.lengthOf(elements), elements, links: shape.literal([]) });
/** Each employment as one element: the organization's fields, then the employment's own. */
const employmentElements = shape.each(shape.data('person', 'employments'), shape.present(shape.merge(shape.data('organization'), shape.omit(shape.data(), 'organization'))));

export function identityRoutes(config: Config): HttpRoute[] {
  const pageNumber = (min: number, max: number) =>
    z.coerce.number({ message: 'must be an integer' }).int('must be an integer').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`).optional();
  return [
    httpRoute({
      area: 'identity',
      method: 'GET',
      path: '/api/data/getPersonById',
      summary: 'Returns basic personal data of the person `oid` (spec 2.3); ETag and If-None-Match (304) supported.',
      input: byOid,
      document: op.LegacyPersonDocument,
      variables: (input) => ({ oid: input.query.oid }),
      respond: (data, input) => {
        const person = data.person;
        const etag = `"${person.eTag ?? ''}"`;
        const headers = { etag, vary: 'X-IdpScopes' };
        if (person.eTag && matchesETag(input.headers['if-none-match'], person.eTag)) return { status: 304, body: undefined, headers };
        return { body: present(person), headers };
      },
      errorBody: defaultErrorBody,
      answer: {
        body: shape.present(shape.data('person')),
        headers: { ETag: 'The version of the record; send it back in If-None-Match.', Vary: 'X-IdpScopes (the fields released depend on it).' },
        notModified: true,
        refusals: [404],
        error: DEFAULT_ERROR,
      },
    }),
    httpRoute({
      area: 'identity',
      method: 'GET',
      path: '/api/data/getPersonOrganizationsById',
      summary: 'Returns the organizations of the person `oid` with the person\'s chief and admin flags (ESIA prns/{oid}/orgs).',
      input: byOid,
      document: op.LegacyPersonOrganizationsDocument,
      variables: (input) => ({ oid: input.query.oid }),
      respond: (data) => ({
        body: collection(data.person.organizations.map((m) => present({ ...m.organization, chief: m.chief, admin: m.admin }))),
      }),
      errorBody: defaultErrorBody,
      answer: {
        body: collectionShape(shape.each(shape.data('person', 'organizations'), shape.present(shape.merge(shape.data('organization'), shape.object({ chief: shape.data('chief'), admin: shape.data('admin') }))))),
        refusals: [404],
        error: DEFAULT_ERROR,
      },
    }),
    httpRoute({
      area: 'identity',
      method: 'GET',
      path: '/api/data/orgs/getPersonGroupsOrganizationsById',
      summary: 'Returns the organization groups the person `oid` belongs to, each with its organization; needs scope usr_org when X-IdpScopes is sent.',
      input: byOid,
      document: op.LegacyPersonGroupsDocument,
      variables: (input) => ({ oid: input.query.oid }),
      respond: (data) => ({
        body: collection(
          data.person.groups.map(({ group }) =>
            present({
              grpId: group.grpId,
              name: group.name,
              description: group.description,
              itSystem: group.itSystem,
              orgOid: group.organization.oid,
              orgShortName: group.organization.shortName,
              orgFullName: group.organization.fullName,
            }),
          ),
        ),
      }),
      errorBody: defaultErrorBody,
      answer: {
        body: collectionShape(
          shape.each(
            shape.data('person', 'groups'),
            shape.within(
              shape.data('group'),
              shape.present(
                shape.object({
                  grpId: shape.data('grpId'),
                  name: shape.data('name'),
                  description: shape.data('description'),
                  itSystem: shape.data('itSystem'),
                  orgOid: shape.data('organization', 'oid'),
                  orgShortName: shape.data('organization', 'shortName'),
                  orgFullName: shape.data('organization', 'fullName'),
                }),
              ),
            ),
          ),
        ),
        refusals: [404],
        error: DEFAULT_ERROR,
      },
    }),
    httpRoute({
      area: 'identity',
      method: 'GET',
      path: '/api/data/orgs/getPersonEmplOrganizationsById',
      summary: 'Returns the person\'s profile in each of the person\'s organizations (ESIA prns/{oid}/emps), paged by pageSize and 1-based pageIndex; needs scope usr_org when X-IdpScopes is sent.',
      input: z.object({
        query: z.object({ oid: oidRule, pageSize: pageNumber(1, config.MAX_PAGE_SIZE), pageIndex: pageNumber(1, 1_000_000) }),
        headers,
      }),
      document: op.LegacyPersonEmploymentsDocument,
      variables: (input) => ({ oid: input.query.oid, pageSize: input.query.pageSize ?? null, pageIndex: input.query.pageIndex ?? null }),
      respond: (data, input) => {
        const elements = data.person.employments.map(({ organization, ...employment }) => present({ ...organization, ...employment }));
        return {
          body: {
            stateFacts: ['hasSize'],
            size: elements.length,
            pageSize: input.query.pageSize ?? config.DEFAULT_PAGE_SIZE,
            pageIndex: input.query.pageIndex ?? 1,
            totalSize: data.person.employmentCount,
            elements,
            links: [],
          },
        };
      },
      errorBody: defaultErrorBody,
      answer: {
        body: shape.object({
          stateFacts: shape.literal(['hasSize']),
          size: shape.lengthOf(employmentElements),
          pageSize: shape.orElse(shape.param('query', 'pageSize'), config.DEFAULT_PAGE_SIZE),
          pageIndex: shape.orElse(shape.param('query', 'pageIndex'), 1),
          totalSize: shape.data('person', 'employmentCount'),
          elements: employmentElements,
          links: shape.literal([]),
        }),
        refusals: [404],
        error: DEFAULT_ERROR,
      },
    }),
  ];
}
