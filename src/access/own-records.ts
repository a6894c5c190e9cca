import type { PrismaClient } from '../generated/prisma/client.js';
import { hasScope, type Principal } from './principal.js';
import { ForbiddenError } from '../errors.js';

// A caller bound to a person (a bearer token with OIDC_PERSON_CLAIM) that lacks the scope to read anyone reads only
// that person's own identity record and the organizations the person belongs to; of an organization's members it
// sees that person alone, so no path through the data reaches another person. The identity root fields declare
// `ownRecords: true` (src/pipeline/access.ts lets such a caller past their scope), and their resolvers ask here.

/** The scope that reads any person and organization. */
export const IDENTITY_READ_SCOPE = 'identity:read';

/** The oid of the only person whose records the caller may read; null when it may read anyone's (or AUTH=off). */
export function ownPersonOnly(principal: Principal | null | undefined): string | null {
  if (!principal || principal.personOid === null || hasScope(principal, IDENTITY_READ_SCOPE)) return null;
  return principal.personOid;
}

function refusal(own: string, what: string): ForbiddenError {
  return new ForbiddenError(`This token is bound to person ${own} and lacks the scope ${IDENTITY_READ_SCOPE} needed to read ${what}.`, { requiredScopes: [IDENTITY_READ_SCOPE] });
}

/** Throws FORBIDDEN when the caller may read only its own person and `oid` is another (decided before any row is read). */
export function assertOwnPerson(principal: Principal | null | undefined, oid: string): void {
  const own = ownPersonOnly(principal);
  if (own !== null && own !== oid) throw refusal(own, 'another person');
}

/** Throws FORBIDDEN when the caller may read only its own person and that person is no member of organization `oid`. */
export async function assertOwnOrganization(db: PrismaClient, principal: Principal | null | undefined, oid: string): Promise<void> {
  const own = ownPersonOnly(principal);
  if (own === null) return;
  // The same answer whether the organization exists or not: the refusal tells nothing of other organizations.
  const membership = await db.personOrganization.findFirst({ where: { personOid: own, organizationOid: oid }, select: { id: true } });
  if (!membership) throw refusal(own, 'an organization the person does not belong to');
}
