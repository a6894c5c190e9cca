import { ADMIN_SCOPE, METRICS_SCOPE } from './access-rules.js';
import { hasScope, type Principal } from './principal.js';

// What a root field of the schema asks of its caller: each declares `extensions.scope` (`<area>:<verb>`), may open
// itself to any valid caller (`anyKey`), or to a caller bound to a person for their own records (`ownRecords`). The
// access guard (src/pipeline/access.ts), the key commands and the schema's own scope list read them here.

type FieldExtensions = { extensions?: { scope?: unknown; anyKey?: unknown; ownRecords?: unknown } | null } | undefined;

/** The scope a root field declares; undefined when it declares none (then only admin:all may run it). */
export function scopeOf(field: FieldExtensions): string | undefined {
  const scope = field?.extensions?.scope;
  return typeof scope === 'string' ? scope : undefined;
}

/** A root field any valid key may run, whatever its scopes (`extensions.anyKey`): what the caller itself may do. */
const opensToAnyKey = (field: FieldExtensions) => field?.extensions?.anyKey === true;

/** Whether a key may run a root field: any key for an `anyKey` field, else its scope (admin:all when it declares none). */
export function mayRun(principal: Principal, field: FieldExtensions): boolean {
  if (opensToAnyKey(field)) return true;
  const scope = scopeOf(field);
  return scope === undefined ? principal.scopes.includes(ADMIN_SCOPE) : hasScope(principal, scope);
}

/** Whether a field may be run, for their own records, by a caller bound to a person who lacks its scope. */
export function servesOwnRecords(field: FieldExtensions): boolean {
  return field?.extensions?.ownRecords === true;
}

interface RootTypes {
  getQueryType(): { getFields(): Record<string, FieldExtensions> } | null | undefined;
  getMutationType(): { getFields(): Record<string, FieldExtensions> } | null | undefined;
  getSubscriptionType(): { getFields(): Record<string, FieldExtensions> } | null | undefined;
}

/** Every scope some root field of the schema declares, plus admin:all and metrics:read. */
export function declaredScopes(schema: RootTypes): Set<string> {
  const scopes = new Set<string>([ADMIN_SCOPE, METRICS_SCOPE]);
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      const scope = scopeOf(field);
      if (scope) scopes.add(scope);
    }
  }
  return scopes;
}
