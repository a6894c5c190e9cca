// Peer of `npm run bench:graphql`: bare node:http + pg (pool of 10) answering the legacy paths of the bench's cases
// with the gateway's envelopes: the ceiling a hand-written server reaches. Prints {"url": ...} once listening.
import { createServer } from 'node:http';
import pg from 'pg';
import { CREATE_QUEUE, GET_QUEUE, LIST_QUEUES, PERSON_ORGANIZATIONS, queueJson } from './sql.mjs';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

const routes = {
  'POST /getQueue': async ({ params }) => {
    const row = (await pool.query(GET_QUEUE, [params.name])).rows[0];
    return row ? { result: queueJson(row) } : { error: { code: -32004, message: `queue "${params.name}" not found` } };
  },
  'POST /listQueues': async ({ params }) => {
    const { rows } = await pool.query(LIST_QUEUES, [params.pageSize]);
    return { result: { queues: rows.map(queueJson), totalCount: Number(rows[0]?.totalCount ?? 0), pageNumber: params.pageNumber ?? 0, pageSize: params.pageSize } };
  },
  'POST /createQueue': async ({ params }) => ({ result: queueJson((await pool.query(CREATE_QUEUE, [params.name, params.rate ?? 1, params.labels ?? []])).rows[0]) }),
  'GET /api/data/getPersonOrganizationsById': async (_, query) => {
    const { rows } = await pool.query(PERSON_ORGANIZATIONS, [query.get('oid')]);
    const elements = rows.map((r) => ({ oid: r.oid, shortName: r.shortName, fullName: r.fullName, type: r.type, ogrn: r.ogrn, inn: r.inn, kpp: r.kpp, leg: r.leg, active: r.organizationActive, chief: r.chief, admin: r.admin }));
    return { size: elements.length, elements };
  },
};

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const route = routes[`${req.method} ${url.pathname}`];
  const send = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };
  if (!route) return send(404, { error: 'no such path' });
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let call = {};
    try {
      if (chunks.length) call = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(400, { error: 'bad JSON' });
    }
    route(call, url.searchParams).then(
      (answer) => send(200, 'error' in answer || 'result' in answer ? { jsonrpc: '2.0', id: call.id ?? null, ...answer } : answer),
      (error) => send(500, { error: String(error) }),
    );
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })));
process.on('SIGTERM', () => {
  server.close();
  void pool.end().then(() => process.exit(0));
});
