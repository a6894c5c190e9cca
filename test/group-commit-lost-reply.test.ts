import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../src/app.js';
import { gql, NO_WORKERS, post, rpc, startProxiedGateway, type ProxiedGateway } from './helpers/gateway.js';
import type { TcpProxy } from './helpers/tcp-proxy.js';

// A shared group-commit statement whose reply is lost after it committed (the connection cut as the server's
// ReadyForQuery passes the relay): its outcome is unknown to the gateway, so every request in it is answered
// SERVICE_UNAVAILABLE; none is told CONFLICT ("already exists") about the row it wrote itself, nor fails on its own
// unit ids. PostgreSQL only: the embedded database has no connection to cut.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('group commit whose reply is lost after commit (PostgreSQL)', () => {
  let t: ProxiedGateway;
  let proxy: TcpProxy;
  let gateway: Gateway;
  let url: string;

  beforeAll(async () => {
    t = await startProxiedGateway({ ...NO_WORKERS });
    ({ proxy, gateway, url } = t);
  }, 60_000);

  afterAll(() => t?.close());

  /**
   * Holds the statement `first` goes in, sends the others meanwhile (so they share the next statement), arms the cut
   * on the statement holding all of `shared`, and lets the first go.
   */
  async function sharedStatementCut<T>(first: () => Promise<T>, firstMark: string, others: (() => Promise<T>)[], shared: string[]) {
    const held = proxy.hold((sent) => sent.includes(firstMark));
    const firstAnswer = first();
    await held.seen;
    const otherAnswers = others.map((send) => send());
    await sleep(1000); // the others reach the group commit and wait behind the held statement (generous: a loaded host)
    let landed = false;
    const cut = proxy.cutAfterReply((sent) => shared.every((mark) => sent.includes(mark))).then(() => (landed = true));
    held.release();
    const answers = await Promise.all([firstAnswer, ...otherAnswers]);
    await Promise.race([cut, sleep(2000)]);
    expect(landed, 'the others shared one statement and the cut landed on it').toBe(true);
    return answers;
  }

  it('createQueue: each request of the lost statement is 503 / -32050 SERVICE_UNAVAILABLE, never CONFLICT; the rows are there', async () => {
    const tag = randomUUID().slice(0, 8);
    const names = ['a', 'b', 'c', 'd', 'e'].map((n) => `lost-${tag}-${n}`);
    const createRpc = (name: string) => () => rpc(url, 'createQueue', { name });
    const createGql = (name: string) => () => gql(url, 'mutation ($name: String!) { createQueue(input: { name: $name }) { name } }', { name });
    const [first, b, c, d, e] = await sharedStatementCut<{ status: number; body?: any; errors?: any }>(
      createRpc(names[0]!),
      names[0]!,
      [createRpc(names[1]!), createRpc(names[2]!), createGql(names[3]!), createGql(names[4]!)],
      names.slice(1),
    );
    expect(first!.body.result.name).toBe(names[0]);
    for (const answer of [b!, c!]) {
      expect(answer.status).toBe(503);
      expect(answer.body.error).toMatchObject({ code: -32050, data: { code: 'SERVICE_UNAVAILABLE' } });
      expect(answer.body.error.message).toMatch(/may or may not have been stored/);
    }
    for (const answer of [d!, e!]) {
      expect(answer.status).toBe(503);
      expect(answer.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'SERVICE_UNAVAILABLE' }) })]);
    }
    // The statement did commit: the cut landed after it.
    const stored = await gateway.services.db.queue.findMany({ where: { name: { in: names } }, orderBy: { name: 'asc' } });
    expect(stored.map((q) => q.name)).toEqual(names);
  }, 30_000);

  it('notification acceptance: each request of the lost statement is 503 SERVICE_UNAVAILABLE, not a 500 on its own unit ids', async () => {
    const sys = `lost-${randomUUID().slice(0, 8)}`;
    const send = (mark: string) => () => post(url, `/v1/systems/${sys}/webhook`, JSON.stringify({ url: `http://127.0.0.1:9/${mark}`, body: { mark } }));
    const marks = ['n1', 'n2', 'n3', 'n4'];
    const [first, ...rest] = await sharedStatementCut(send('first'), '/first', marks.map(send), marks.map((m) => `/${m}`));
    expect(first!.status).toBe(200);
    for (const answer of rest) {
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    }
    const stored = await gateway.services.db.notification.findMany({ where: { systemId: sys } });
    expect(stored).toHaveLength(5);
  }, 30_000);
});
