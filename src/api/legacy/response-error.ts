import { STATUS_CODES } from 'node:http';
import type { HttpFailure } from './http-route.js';

/**
 * ResponseError, the error body of the notification sending (4.5) and stub (4.6) paths:
 * `{timestamp, status, error, code, message, fields?}` (Spring Boot's error attributes plus our code and fields).
 */
export function responseError(failure: HttpFailure): unknown {
  return {
    timestamp: new Date().toISOString(),
    status: failure.status,
    error: STATUS_CODES[failure.status] ?? 'Error',
    code: failure.code,
    message: failure.message,
    ...(failure.fields?.length && { fields: failure.fields }),
  };
}
