import { z } from 'zod';

// Scopes are `<area>:<verb>`, as every GraphQL root field declares them in `extensions.scope`.

export const ADMIN_SCOPE = 'admin:all';
/** Lets Prometheus (or anyone holding it) read `/metrics` when AUTH=on. */
export const METRICS_SCOPE = 'metrics:read';
export const SCOPE_PATTERN = /^[a-z]+:[a-z]+$/;

/** `gw_<prefix>_<secret>`: prefix 12 hex characters (found by it, shown in lists), secret 43 base64url characters. */
export const KEY_PATTERN = /^gw_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

const scope = z
  .string()
  .trim()
  .transform((s) => (s === 'admin' ? ADMIN_SCOPE : s))
  .pipe(z.string().regex(SCOPE_PATTERN, 'must be <area>:<verb>, for example queues:read (admin grants everything)'));

export const apiKeyRules = {
  create: z.strictObject({
    name: z.string().trim().min(1, 'is required').max(100, 'at most 100 characters'),
    scopes: z.array(scope).min(1, 'name at least one scope').max(64, 'at most 64 scopes'),
    systemId: z.string().trim().min(1, 'must not be empty').max(128, 'at most 128 characters').optional(),
  }),
  id: z.string().uuid('is not an API key id'),
};

export type CreateApiKeyInput = z.output<typeof apiKeyRules.create>;
