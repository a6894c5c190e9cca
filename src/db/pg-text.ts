import pg from 'pg';

// Column values in PostgreSQL's text format, read as Prisma reads them, for the gateway's own statements
// (src/db/statements.ts). A page of queues parses two timestamps and a label array per row: V8's Date string parser and
// postgres-array's general one were a large share of the page's CPU (docs/performance.md). Each has a fast path for
// the one shape PostgreSQL writes in practice and hands anything else to the general parser, so both read the same.

/** The type of a `timestamp without time zone` column. */
export const TIMESTAMP: number = 1114;

const DASH = 45;
const SPACE = 32;
const COLON = 58;
const DOT = 46;

/** The number of the two digits at `at`, or -1 when either is not a digit. */
function twoDigits(text: string, at: number): number {
  const tens = text.charCodeAt(at) - 48;
  const ones = text.charCodeAt(at + 1) - 48;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1;
}

/** A `timestamp without time zone` as UTC (node-postgres would take it as local time). */
export function parseUtcTimestamp(text: string): Date {
  const length = text.length;
  // "YYYY-MM-DD HH:MM:SS", then a dot and one to six digits of the second's fraction.
  if (length >= 19 && length <= 26 && length !== 20 && text.charCodeAt(4) === DASH && text.charCodeAt(7) === DASH && text.charCodeAt(10) === SPACE && text.charCodeAt(13) === COLON && text.charCodeAt(16) === COLON && (length === 19 || text.charCodeAt(19) === DOT)) {
    const century = twoDigits(text, 0);
    const yearOf = twoDigits(text, 2);
    const month = twoDigits(text, 5);
    const day = twoDigits(text, 8);
    const hours = twoDigits(text, 11);
    const minutes = twoDigits(text, 14);
    const seconds = twoDigits(text, 17);
    let milliseconds = 0;
    let fractionValid = true;
    for (let at = 20, scale = 100; at < length; at++, scale /= 10) {
      const digit = text.charCodeAt(at) - 48;
      if (!(digit >= 0 && digit <= 9)) fractionValid = false;
      else if (scale >= 1) milliseconds += digit * scale;
    }
    // Date.UTC reads years 0-99 as 1900-1999; out-of-range fields are the general parser's to refuse or roll over.
    if (fractionValid && century >= 1 && yearOf >= 0 && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59 && seconds >= 0 && seconds <= 59) {
      return new Date(Date.UTC(century * 100 + yearOf, month - 1, day, hours, minutes, seconds, milliseconds));
    }
  }
  return new Date(`${text.replace(' ', 'T')}Z`);
}

/** The type of a `text[]` column. */
export const TEXT_ARRAY: number = 1009;
const generalTextArray = pg.types.getTypeParser(TEXT_ARRAY, 'text') as (text: string) => (string | null)[];

/**
 * A `text[]`. PostgreSQL quotes every element that is empty, holds a quote, backslash, comma, brace or white space, or
 * reads as NULL. So without a quote or backslash, and with no inner brace (more than one dimension, or not
 * PostgreSQL's output), the elements are the text between commas, and an unquoted NULL is a null.
 */
export function parseTextArray(text: string): (string | null)[] {
  if (text.charCodeAt(0) !== 123 || text.indexOf('}') !== text.length - 1 || text.indexOf('"') !== -1 || text.indexOf('\\') !== -1 || text.indexOf('{', 1) !== -1) return generalTextArray(text);
  if (text.length === 2) return [];
  const elements: (string | null)[] = text.slice(1, -1).split(',');
  for (let i = 0; i < elements.length; i++) if (elements[i] === 'NULL') elements[i] = null;
  return elements;
}
