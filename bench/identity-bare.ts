import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

// The peer of `npm run bench:identity`: bare node:http + pg answering getPersonById with the same single SELECT
// and the same JSON as the gateway's legacy path. Prints its URL on stdout.

interface Row {
  oid: string;
  firstName: string;
  lastName: string;
  middleName: string | null;
  birthDate: string | null;
  birthPlace: string | null;
  gender: string | null;
  trusted: boolean;
  rfgUOperatorCheck: boolean;
  citizenship: string | null;
  snils: string | null;
  inn: string | null;
  updatedOn: Date;
  status: string;
  verifying: boolean;
  rIdDoc: string | null;
  containsUpCfmCode: boolean;
  eTag: string;
  stateFacts: string[];
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const SELECT = 'SELECT * FROM "Person" WHERE "oid" = $1 LIMIT 1';

function record(p: Row) {
  const rIdDoc = p.rIdDoc === null ? null : Number(p.rIdDoc);
  const q = `?oid=${encodeURIComponent(p.oid)}`;
  const full = {
    stateFacts: p.stateFacts, firstName: p.firstName, lastName: p.lastName, middleName: p.middleName, birthDate: p.birthDate,
    birthPlace: p.birthPlace, gender: p.gender, trusted: p.trusted, rfgUOperatorCheck: p.rfgUOperatorCheck, citizenship: p.citizenship,
    snils: p.snils, inn: p.inn, updatedOn: Math.floor(p.updatedOn.getTime() / 1000), status: p.status, verifying: p.verifying, rIdDoc,
    containsUpCfmCode: p.containsUpCfmCode, eTag: p.eTag,
    links: [`/api/data/getPersonOrganizationsById${q}`, `/api/data/orgs/getPersonGroupsOrganizationsById${q}`, `/api/data/orgs/getPersonEmplOrganizationsById${q}`],
    ridDoc: rIdDoc, etag: p.eTag,
  };
  return Object.fromEntries(Object.entries(full).filter(([, v]) => v !== null));
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const oid = url.searchParams.get('oid');
  const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };
  if (url.pathname !== '/api/data/getPersonById') return send(404, { error: { status: 404, code: 'NOT_FOUND', message: 'no such path' } });
  if (!oid || !/^\d{1,20}$/.test(oid)) return send(400, { error: { status: 400, code: 'BAD_USER_INPUT', message: 'bad oid' } });
  pool.query<Row>(SELECT, [oid]).then(
    ({ rows }) => {
      const row = rows[0];
      if (!row) return send(404, { error: { status: 404, code: 'NOT_FOUND', message: `person "${oid}" not found` } });
      const headers = { etag: `"${row.eTag}"`, vary: 'X-IdpScopes' };
      if (req.headers['if-none-match'] === headers.etag) return send(304, undefined, headers);
      send(200, record(row), headers);
    },
    () => send(500, { error: { status: 500, code: 'INTERNAL', message: 'Unexpected error.' } }),
  );
});

server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
