// The gateway's cursors are positions (`o:<offset>`, base64url: src/schema/common.ts offsetCursor), so the console,
// served by the same gateway, names the start of any page itself: page 24 of 24 is one request, not 23 clicks.
// test/console-api.test.ts holds this to the endCursor the gateway gives for the page before.

/** The `after` cursor of page `page` (from 1) of `size` rows; null for the first. */
export function pageAfter(page: number, size: number): string | null {
  if (page <= 1) return null;
  return btoa(`o:${(page - 1) * size - 1}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
