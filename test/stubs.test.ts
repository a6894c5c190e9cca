import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { gql, post, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { waitFor } from './helpers/notification-peers.js';
import { overSse } from './helpers/transports.js';

// Area G: the six stub paths (page response of 2.6, validated paging and sorting, status transitions, attachments),
// their GraphQL twins and the notificationStatusChanged subscription.

async function call(url: string, path: string, method = 'GET'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, { method });
  return { status: res.status, body: await res.json() };
}

describe.each(DATABASES)('notification stubs on %s', (kind) => {
  let gw: TestGateway;
  const type = `appointment_${randomUUID().slice(0, 8)}`;
  const ids: string[] = [];
  let incomingId = '';

  beforeAll(async () => {
    gw = await startTestGateway(kind, { DELIVERY_POLL_MS: '50' });
    for (const title of ['first', 'second', 'third']) {
      const answer = await post(gw.url, '/v1/systems/portal/general', JSON.stringify({ type, title, content: `${title} reminder`, extraNotificationData: { room: 12 } }));
      expect(answer.status).toBe(200);
      ids.push(answer.body.notificationResponses[0].id);
      incomingId = answer.body.incomingId;
      await new Promise((r) => setTimeout(r, 5)); // distinct createTime
    }
    await waitFor(async () => (await call(gw.url, `/v1/type/${type}?status=DELIVERED`)).body.totalElements === 3);
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
  });

  it('lists a type as the page response, with paging, sorting and the status filter', async () => {
    const page = await call(gw.url, `/v1/type/${type}?pageSize=2&pageNumber=0&sortBy=createTime&order=ASC`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ totalElements: 3, pageSize: 2, currentPage: 0, totalPages: 2, sortBy: 'createTime', order: 'ASC' });
    expect(page.body.content.map((n: any) => n.id)).toEqual(ids.slice(0, 2));
    expect(page.body.content[0]).toMatchObject({ type, channel: 'general', systemId: 'portal', status: 'DELIVERED', recipient: 'in-app', payload: { type, title: 'first' } });
    const second = await call(gw.url, `/v1/type/${type}?pageSize=2&pageNumber=1&sortBy=createTime&order=ASC`);
    expect(second.body.content.map((n: any) => n.id)).toEqual([ids[2]]);
    const desc = await call(gw.url, `/v1/type/${type}`);
    expect(desc.body.content.map((n: any) => n.id)).toEqual([...ids].reverse());
    expect((await call(gw.url, `/v1/type/${type}?status=FAILED`)).body.totalElements).toBe(0);
    const byIds = await call(gw.url, `/v1/type/${type}/ids/${ids[0]},${ids[2]}?order=ASC`);
    expect(byIds.body.content.map((n: any) => n.id)).toEqual([ids[0], ids[2]]);
    const byIncoming = await call(gw.url, `/v1/systems/portal/type/${type}/incomingId/${incomingId}`);
    expect(byIncoming.body.content.map((n: any) => n.id)).toEqual([ids[2]]);
  });

  it('refuses bad paging, sorting and filters with a ResponseError naming each', async () => {
    const bad = await call(gw.url, `/v1/type/${type}?sortBy=password&order=UP&pageSize=100000&pageNumber=-1&status=LOST`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 400, error: 'Bad Request', code: 'BAD_USER_INPUT' });
    expect(bad.body.fields.map((f: any) => f.field).sort()).toEqual(['query.order', 'query.pageNumber', 'query.pageSize', 'query.sortBy', 'query.status']);
    const badIds = await call(gw.url, `/v1/type/${type}/ids/not-a-uuid`);
    expect(badIds.status).toBe(400);
    expect(badIds.body.fields[0].field).toBe('path.ids.0');
    const unknownQuery = await call(gw.url, `/v1/type/${type}?colour=red`);
    expect(unknownQuery.body.fields).toEqual([{ field: 'query.colour', message: 'is not a known field' }]);
  });

  it('PUT moves statuses along the allowed transitions only; an illegal one is 409 and changes nothing', async () => {
    const read = await call(gw.url, `/v1/type/${type}/ids/${ids[0]},${ids[1]}?status=READ&sortBy=createTime&order=ASC`, 'PUT');
    expect(read.status).toBe(200);
    expect(read.body.content.map((n: any) => [n.id, n.status])).toEqual([
      [ids[0], 'READ'],
      [ids[1], 'READ'],
    ]);
    const illegal = await call(gw.url, `/v1/type/${type}/ids/${ids[1]},${ids[2]}?status=CANCELLED`, 'PUT');
    expect(illegal.status).toBe(409);
    expect(illegal.body).toMatchObject({ status: 409, error: 'Conflict', code: 'CONFLICT' });
    expect(illegal.body.message).toMatch(/READ/);
    const after = await call(gw.url, `/v1/type/${type}/ids/${ids[1]},${ids[2]}?order=ASC&sortBy=createTime`);
    expect(after.body.content.map((n: any) => n.status)).toEqual(['READ', 'DELIVERED']);
    const missing = await call(gw.url, `/v1/type/${type}/ids/${randomUUID()}?status=READ`, 'PUT');
    expect(missing.status).toBe(404);
    const noStatus = await call(gw.url, `/v1/type/${type}/ids/${ids[2]}`, 'PUT');
    expect(noStatus.status).toBe(400);
    expect(noStatus.body.fields[0].field).toBe('query.status');
  });

  it('attachments: none for a general notification, 404 for an unknown id', async () => {
    expect((await call(gw.url, `/v1/type/${type}/id/${ids[0]}/attachments`)).body).toEqual([]);
    expect((await call(gw.url, `/v1/type/${type}/id/${randomUUID()}/attachments`)).status).toBe(404);
  });

  it('GraphQL twins and the notificationStatusChanged subscription (server-sent events)', async () => {
    const twin = await gql(gw.url, 'query($t: String!) { stubNotifications(type: $t, status: DELIVERED) { totalElements content { id status } } }', { t: type });
    expect(twin.errors).toBeUndefined();
    expect(twin.data!.stubNotifications.totalElements).toBe(1);
    const bad = await gql(gw.url, 'query($t: String!) { stubNotifications(type: $t, sortBy: "x", pageSize: 0) { totalElements } }', { t: type });
    expect(bad.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    expect((bad.errors![0]!.extensions!.fields as any[]).map((f) => f.field).sort()).toEqual(['pageSize', 'sortBy']);

    const query = 'subscription($i: String!) { notificationStatusChanged(incomingId: $i) { id status } }';
    // A request still being sent: its units as they change, the last one when the worker is done, then `complete`
    // (a limit above the possible count: the stream must end by itself).
    const fresh = await post(gw.url, '/v1/systems/portal/general', JSON.stringify({ type, title: 'fourth', content: 'fourth reminder' }));
    const live = await overSse(gw.url, query, { i: fresh.body.incomingId }, {}, 10);
    expect(live.results.length).toBeGreaterThanOrEqual(1);
    expect(live.results.at(-1)).toEqual({ data: { notificationStatusChanged: [{ id: fresh.body.notificationResponses[0].id, status: 'DELIVERED' }] } });
    // A consumer's later change (ARCHIVED) is read by a new subscription, which answers at once and completes.
    const changed = await gql(gw.url, 'mutation($t: String!, $ids: [String!]!) { changeNotificationStatus(type: $t, ids: $ids, status: ARCHIVED) { totalElements } }', { t: type, ids: [ids[2]] });
    expect(changed.errors).toBeUndefined();
    const archived = await overSse(gw.url, query, { i: incomingId }, {}, 10);
    expect(archived.results).toEqual([{ data: { notificationStatusChanged: [{ id: ids[2], status: 'ARCHIVED' }] } }]);
  });
});
