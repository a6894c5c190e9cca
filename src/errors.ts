// Domain errors: each carries a stable code and the HTTP status that fits it; the edges (GraphQL, REST,
// JSON-RPC) translate them in one place each (src/pipeline/mask-error.ts, src/api/legacy/error-shapes.ts).

export type FieldIssue = { field: string; message: string };

/**
 * The one table of error codes and the HTTP status each carries, on every door: a domain error's, a refusal's made
 * by the pipeline (GraphQL over HTTP), a legacy path's answer.
 */
export const HTTP_STATUS_BY_CODE = {
  BAD_USER_INPUT: 400,
  BAD_REQUEST: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  TOO_MANY_SUBSCRIPTIONS: 429,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof HTTP_STATUS_BY_CODE;

/** The HTTP status of an error code; 500 for a code of no client mistake. */
export function httpStatusOf(code: unknown): number {
  return typeof code === 'string' && Object.hasOwn(HTTP_STATUS_BY_CODE, code) ? HTTP_STATUS_BY_CODE[code as ErrorCode] : 500;
}

export abstract class AppError extends Error {
  abstract readonly code: ErrorCode;
  get httpStatus(): number {
    return HTTP_STATUS_BY_CODE[this.code];
  }
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  readonly code = 'BAD_USER_INPUT';
  constructor(readonly issues: FieldIssue[]) {
    super(`Invalid input: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, { fields: issues });
  }
}

export class NotFoundError extends AppError {
  readonly code = 'NOT_FOUND';
}

export class ConflictError extends AppError {
  readonly code = 'CONFLICT';
}

export class UnauthenticatedError extends AppError {
  readonly code = 'UNAUTHENTICATED';
}

export class ForbiddenError extends AppError {
  readonly code = 'FORBIDDEN';
}

export class RateLimitedError extends AppError {
  readonly code = 'RATE_LIMITED';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message, { retryAfterSeconds });
  }
}

export class PayloadTooLargeError extends AppError {
  readonly code = 'PAYLOAD_TOO_LARGE';
}

/** Seconds a client is told to wait (Retry-After) when the database cannot be reached. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/** The database cannot be reached: an outage, not a bug; the client may retry after Retry-After (HTTP 503). */
export class ServiceUnavailableError extends AppError {
  readonly code = 'SERVICE_UNAVAILABLE';
  constructor(
    message = 'The service is temporarily unavailable: its database cannot be reached. Retry shortly.',
    readonly retryAfterSeconds = OUTAGE_RETRY_AFTER_SECONDS,
  ) {
    super(message, { retryAfterSeconds });
  }
}

/** Seconds a client is told to wait when the embedded database's disk is nearly full: space comes back by an operator's hand. */
export const DISK_FULL_RETRY_AFTER_SECONDS = 30;

/**
 * The embedded database's disk is nearly full: writes are refused until space is freed, reads are served. A 503 like
 * any outage (same code, envelope and Retry-After on every door), with its own message (docs/decisions.md).
 */
export class DiskFullError extends ServiceUnavailableError {
  constructor() {
    super('The service cannot store anything now: the disk of its database is nearly full. Reads are served; retry the write later.', DISK_FULL_RETRY_AFTER_SECONDS);
  }
}
