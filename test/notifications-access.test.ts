import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';

// A key bound to a system sends and reads that system's notifications only (AUTH=on), on the legacy paths.

describe('notifications with system-bound keys', () => {
  let t: TestGateway;
  let own: string;
  let other: string;
  let reader: string;
  let incomingId: string;
  let id: string;
  beforeAll(async () => {
    t = await startTestGateway('pglite', { AUTH: 'on', RATE_LIMIT_PER_MINUTE: '0', DELIVERY_WORKER: 'off' });
    own = await makeKey(t, ['notifications:send', 'notifications:read', 'notifications:write'], 'sys-a');
    other = await makeKey(t, ['notifications:send', 'notifications:read', 'notifications:write'], 'sys-b');
    reader = await makeKey(t, ['notifications:read']);
    const sent = await post(t.url, '/v1/systems/sys-a/general', JSON.stringify({ type: 'notice', title: 'Hello', content: 'Body' }), bearer(own));
    expect(sent.status).toBe(200);
    incomingId = sent.body.incomingId;
    id = sent.body.notificationResponses[0].id;
  });
  afterAll(() => t?.close());

  it('refuses sending for another system with 403 in the ResponseError body, storing nothing', async () => {
    const r = await post(t.url, '/v1/systems/sys-a/general', JSON.stringify({ type: 'notice', title: 'x', content: 'y' }), bearer(other));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    const page = await fetch(`${t.url}/v1/type/notice`, { headers: bearer(reader) });
    expect(((await page.json()) as { totalElements: number }).totalElements).toBe(1);
  });

  it('lets the owner read by incomingId and refuses the other system', async () => {
    const mine = await fetch(`${t.url}/v1/systems/sys-a/type/notice/incomingId/${incomingId}`, { headers: bearer(own) });
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as { content: { id: string }[] }).content.map((n) => n.id)).toEqual([id]);
    const theirs = await fetch(`${t.url}/v1/systems/sys-a/type/notice/incomingId/${incomingId}`, { headers: bearer(other) });
    expect(theirs.status).toBe(403);
  });

  it('narrows unbound lists to the key system, and hides other systems from status changes and attachments', async () => {
    const otherList = await fetch(`${t.url}/v1/type/notice/ids/${id}`, { headers: bearer(other) });
    expect(((await otherList.json()) as { totalElements: number }).totalElements).toBe(0);
    const ownList = await fetch(`${t.url}/v1/type/notice/ids/${id}`, { headers: bearer(own) });
    expect(((await ownList.json()) as { totalElements: number }).totalElements).toBe(1);
    const put = await fetch(`${t.url}/v1/type/notice/ids/${id}?status=READ`, { method: 'PUT', headers: bearer(other) });
    expect(put.status).toBe(404);
    const attachments = await fetch(`${t.url}/v1/type/notice/id/${id}/attachments`, { headers: bearer(other) });
    expect(attachments.status).toBe(404);
    const unbound = await fetch(`${t.url}/v1/type/notice`, { headers: bearer(reader) });
    expect(((await unbound.json()) as { totalElements: number }).totalElements).toBe(1);
  });
});
