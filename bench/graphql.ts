// `npm run bench:graphql`: the gateway's request path against PostGraphile 5, side by side, in one run.
//
// One fresh PostgreSQL database (BENCH_POSTGRES_URL, default the test server) migrated by the gateway's migrations and
// filled with 1,000 queues, 200 organizations and 10,000 persons in 3 organizations each. Five servers over it, each
// in its own process with a pg pool of 10: PostGraphile 5 (pinned devDependency, Amber preset), graphql-yoga with
// hand-written resolvers over raw pg, bare node:http + pg, and the gateway as its Dockerfile runs it (compiled,
// NODE_ENV=production; AUTH off, no workers), loaded through both of its doors, and a second gateway with AUTH=on
// called with an API key (in `Authorization: Bearer`, and in X-Api-Key) under a rate limit raised so that it refuses
// nothing (keyed >= 0.9x AUTH=off in every case, the price of the key check and of the rate limit's bookkeeping;
// reads pick one of 1,000 rows per request and pass it as a variable), and a third with tracing on, exporting every span to an
// OTLP receiver in this process (issue 26: traced >= 0.75x untraced), and a fourth with both at once, production's
// shape (keyed + traced: >= 1.5x PostGraphile in every case PostGraphile has); the peers too run with NODE_ENV=production. Four
// cases: read one queue by name, list a page of 50 queues with the total count, read a person with their
// organizations (nested), create a queue (write). Reads pick a random row per request; writes use a
// new name per request, and the rows are counted afterwards. Then the Queue table grows to BENCH_BIG_QUEUES (70,000)
// rows for three more cases: a page of 50 with the total (the count is most of it), a page of 50 without the total (what a list view that never shows a count asks), and
// one-off documents (a queue's name written into each query's text, as many hand-written clients send it: one new
// document per request, past every document cache), which the legacy door cannot send and is left out of.
// Each case loads every target with the same autocannon settings (BENCH_CONNECTIONS 16, BENCH_SECONDS 16 in all after
// a BENCH_WARM_UP_SECONDS 3 warm-up), in BENCH_ROUNDS (16) interleaved rounds of BENCH_SECONDS / BENCH_ROUNDS each, in
// a new order every round (a permutation drawn from BENCH_SEED, 1, and the round): a slow spell of a shared host then
// falls on every target alike instead of on whichever ran during it, and no target always follows the same neighbour
// (a fixed order turned by one each round kept each target between the same two in every round). Before each
// slice the machine settles (up to 3 s), so that what the last slice left behind (autovacuum of the rows it wrote, a
// process's garbage collection) is not counted as the next target's price (BENCH_ROUNDS=1 loads each target once, one
// after another). Sixteen rounds of 1 s rather than four of 2 s: on a shared 2-core host one round's traced or keyed
// ratio ranges from half to nearly twice the run's, and four rounds left the production-shape goals to chance.
// Prints req/s, p99 (median of the rounds), the server's and PostgreSQL's CPU per request and each target's ratio to
// PostGraphile, as a Markdown table.
// BENCH_CASES=read,write and BENCH_DOORS=gateway,PostGraphile keep only the cases / targets whose names start so.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon, { type RequestShape, type Result } from 'autocannon';
import pg from 'pg';
import { createApiKey } from '../src/access/api-keys.js';
import { openDatabase } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrations.js';
import { freshDatabase } from '../test/helpers/databases.js';
import { sampleOf } from '../test/helpers/metrics.js';
import { GENERATE_EMPLOYMENTS, GENERATE_ORGANIZATIONS, GENERATE_PERSONS, GENERATE_QUEUES, QUEUE_FIELDS as QUEUE, queueName, randomQueueName } from './fixtures.js';
import { cpuSeconds, median, postgresCpuSeconds, roundOrders, runBench, settle, startChild, startGateway, type Child } from './lib.js';

const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 16);
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 16));
const ONLY = process.env.BENCH_CASES?.split(',');
const QUEUES = 1000;
const BIG_QUEUES = Number(process.env.BENCH_BIG_QUEUES ?? 70_000);
const PERSONS = 10_000;
const ORGANIZATIONS = 200;
const EMPLOYMENTS_PER_PERSON = 3;
const FIRST_PERSON = 5_000_000_000;
const FIRST_ORGANIZATION = 7_000_000_000;

type PlainDoor = 'bare node:http + pg' | 'graphql-yoga + raw pg' | 'PostGraphile 5' | 'gateway GraphQL' | 'gateway legacy';
/** The gateway with AUTH=on, called with an API key, against the same door with AUTH=off. */
type KeyedDoor = 'gateway GraphQL, AUTH=on + key' | 'gateway legacy, AUTH=on + key' | 'gateway GraphQL, AUTH=on + X-Api-Key' | 'gateway legacy, AUTH=on + X-Api-Key';
type Door = PlainDoor | KeyedDoor | TracedDoor | ProductionDoor;
const KEYED: Record<KeyedDoor, PlainDoor> = {
  'gateway GraphQL, AUTH=on + key': 'gateway GraphQL',
  'gateway legacy, AUTH=on + key': 'gateway legacy',
  'gateway GraphQL, AUTH=on + X-Api-Key': 'gateway GraphQL',
  'gateway legacy, AUTH=on + X-Api-Key': 'gateway legacy',
};
/** The keyed doors that send their key in X-Api-Key; the others send `Authorization: Bearer`. */
const sendsApiKeyHeader = (door: Door) => door.endsWith('X-Api-Key');
/** The gateway with tracing on, exporting every span to an OTLP receiver on loopback, against the same door untraced. */
type TracedDoor = 'gateway GraphQL, tracing on' | 'gateway legacy, tracing on';
const TRACED: Record<TracedDoor, PlainDoor> = { 'gateway GraphQL, tracing on': 'gateway GraphQL', 'gateway legacy, tracing on': 'gateway legacy' };
/** Both at once, as production runs it: AUTH=on with a key under its rate limit, and tracing on. */
type ProductionDoor = 'gateway GraphQL, keyed + traced' | 'gateway legacy, keyed + traced';
const PRODUCTION: Record<ProductionDoor, PlainDoor> = { 'gateway GraphQL, keyed + traced': 'gateway GraphQL', 'gateway legacy, keyed + traced': 'gateway legacy' };
const DOORS: Door[] = [
  'bare node:http + pg',
  'graphql-yoga + raw pg',
  'PostGraphile 5',
  'gateway GraphQL',
  'gateway legacy',
  ...(Object.keys(KEYED) as KeyedDoor[]),
  ...(Object.keys(TRACED) as TracedDoor[]),
  ...(Object.keys(PRODUCTION) as ProductionDoor[]),
];
/** The plain door each variant door sends its requests to (keyed, traced, or both). */
const PLAIN_OF: Partial<Record<Door, PlainDoor>> = { ...KEYED, ...TRACED, ...PRODUCTION };
const sendsKey = (door: Door) => door in KEYED || door in PRODUCTION;
/** The API key the keyed doors send (made before the keyed gateway starts). */
let benchKey = '';
const BASELINE: Door = 'PostGraphile 5';

/** One request of a case through one door, and a string its answer must contain (so an error answer is noticed). */
interface Call {
  request: RequestShape;
  expect: string;
}
type Caller = (pick: string) => Call;

// A new object per request: autocannon writes the body's content-length into the headers it is given.
const json = () => ({ 'content-type': 'application/json' });
const graphql = (query: string, variables: Record<string, unknown>, expect: string): Call => ({
  request: { method: 'POST', path: '/graphql', headers: json(), body: JSON.stringify({ query, variables }) },
  expect,
});
const rpc = (path: string, params: Record<string, unknown>, expect: string): Call => ({
  request: { method: 'POST', path, headers: json(), body: JSON.stringify({ jsonrpc: '2.0', method: path.slice(1), params, id: 1 }) },
  expect,
});

const ORGANIZATION = 'oid shortName fullName type ogrn inn kpp leg active';

interface BenchCase {
  name: string;
  /** A new value per request: the row to read, or the name of the row to write (`door` keeps writes apart). */
  pick: (door: number) => string;
  /** The doors that can send the case (a legacy client cannot write a one-off document). */
  callers: Partial<Record<PlainDoor, Caller>>;
  /** Run once before the case (after the cases before it). */
  prepare?: (client: pg.Client) => Promise<void>;
  /** The peer the case's goal is set against, when not PostGraphile 5. */
  goalPeer?: Door;
}

/** A door's caller (undefined when the door cannot send the case): a variant door sends its plain door's request, with the API key when it is keyed. */
function callerOf(bench: BenchCase, door: Door): Caller | undefined {
  const plain = bench.callers[PLAIN_OF[door] ?? (door as PlainDoor)];
  if (!plain || !sendsKey(door)) return plain;
  return (pick) => {
    const call = plain(pick);
    const credential: Record<string, string> = sendsApiKeyHeader(door) ? { 'x-api-key': benchKey } : { authorization: `Bearer ${benchKey}` };
    return { ...call, request: { ...call.request, headers: { ...call.request.headers, ...credential } } };
  };
}

let written = 0;
const randomQueue = () => randomQueueName(QUEUES);
const randomPerson = () => String(FIRST_PERSON + 1 + Math.floor(Math.random() * PERSONS));
const randomBigQueue = () => randomQueueName(BIG_QUEUES);
// The big cases run on exactly BIG_QUEUES queues in a table of their size, as a table autovacuum has seen: the write
// case's rows (over a million in a full run, each target's writes counted above) would otherwise multiply the rows
// counted; deleted, they leave the table that many pages long (a plain VACUUM frees the pages but keeps them, and the
// new queues land after them), and a table never vacuumed since its bulk insert has no visibility map. Either way the
// count reads every page: tens of ms of PostgreSQL per count, the same for every target. VACUUM FULL rewrites it.
const growQueues = async (client: pg.Client) => {
  await client.query(`DELETE FROM "Queue" WHERE name NOT LIKE 'queue-%'`);
  await client.query(GENERATE_QUEUES, [BIG_QUEUES]);
  await client.query('VACUUM (FULL, ANALYZE) "Queue"');
};

/** The first page of 50 queues by name with the total count, as each target asks it. */
const PAGE_WITH_TOTAL: BenchCase['callers'] = {
  'bare node:http + pg': (last) => rpc('/listQueues', { pageSize: 50, pageNumber: 0 }, last),
  'graphql-yoga + raw pg': (last) => graphql(`{ queues(first: 50) { totalCount nodes { ${QUEUE} } } }`, {}, last),
  'PostGraphile 5': (last) => graphql(`{ allQueues(first: 50, orderBy: NAME_ASC) { totalCount nodes { ${QUEUE} } } }`, {}, last),
  'gateway GraphQL': (last) => graphql(`{ queues(first: 50, orderBy: NAME_ASC) { totalCount nodes { ${QUEUE} } } }`, {}, last),
  'gateway legacy': (last) => rpc('/listQueues', { pageSize: 50, pageNumber: 0 }, last),
};

const CASES: BenchCase[] = [
  {
    name: 'read: one queue by name',
    pick: randomQueue,
    callers: {
      'bare node:http + pg': (name) => rpc('/getQueue', { name }, name),
      'graphql-yoga + raw pg': (name) => graphql(`query($name: String!) { queue(name: $name) { ${QUEUE} } }`, { name }, name),
      'PostGraphile 5': (name) => graphql(`query($name: String!) { queueByName(name: $name) { ${QUEUE} } }`, { name }, name),
      'gateway GraphQL': (name) => graphql(`query($name: String!) { queue(name: $name) { ${QUEUE} } }`, { name }, name),
      'gateway legacy': (name) => rpc('/getQueue', { name }, name),
    },
  },
  {
    name: 'list: a page of 50 queues + total',
    pick: () => queueName(50),
    callers: PAGE_WITH_TOTAL,
  },
  {
    name: 'nested: a person with organizations',
    pick: randomPerson,
    callers: {
      'bare node:http + pg': (oid) => ({ request: { method: 'GET', path: `/api/data/getPersonOrganizationsById?oid=${oid}` }, expect: '"chief"' }),
      'graphql-yoga + raw pg': (oid) =>
        graphql(`query($oid: String!) { person(oid: $oid) { oid firstName lastName organizations { chief admin active organization { ${ORGANIZATION} } } } }`, { oid }, oid),
      'PostGraphile 5': (oid) =>
        graphql(
          `query($oid: String!) { personByOid(oid: $oid) { oid firstName lastName personOrganizationsByPersonOid { nodes { chief admin active organizationByOrganizationOid { ${ORGANIZATION} } } } } }`,
          { oid },
          oid,
        ),
      'gateway GraphQL': (oid) =>
        graphql(`query($oid: String!) { person(oid: $oid) { oid firstName lastName organizations { chief admin active organization { ${ORGANIZATION} } } } }`, { oid }, oid),
      'gateway legacy': (oid) => ({ request: { method: 'GET', path: `/api/data/getPersonOrganizationsById?oid=${oid}` }, expect: '"chief"' }),
    },
  },
  {
    name: 'write: create a queue',
    pick: (door) => `w${door}-${++written}`,
    callers: {
      'bare node:http + pg': (name) => rpc('/createQueue', { name, rate: 3, labels: ['bench'] }, name),
      'graphql-yoga + raw pg': (name) => graphql(`mutation($name: String!) { createQueue(input: { name: $name, rate: 3, labels: ["bench"] }) { ${QUEUE} } }`, { name }, name),
      'PostGraphile 5': (name) =>
        graphql(`mutation($name: String!) { createQueue(input: { queue: { name: $name, rate: 3, labels: ["bench"] } }) { queue { ${QUEUE} } } }`, { name }, name),
      'gateway GraphQL': (name) => graphql(`mutation($name: String!) { createQueue(input: { name: $name, rate: 3, labels: ["bench"] }) { ${QUEUE} } }`, { name }, name),
      'gateway legacy': (name) => rpc('/createQueue', { name, rate: 3, labels: ['bench'] }, name),
    },
  },
  {
    name: `list: a page of 50 of ${BIG_QUEUES} queues + total`,
    pick: () => queueName(50),
    prepare: growQueues,
    callers: PAGE_WITH_TOTAL,
  },
  {
    name: `list: a page of 50 of ${BIG_QUEUES} queues, no total`,
    pick: () => queueName(50),
    prepare: growQueues,
    callers: {
      'PostGraphile 5': (last) => graphql(`{ allQueues(first: 50, orderBy: NAME_ASC) { nodes { ${QUEUE} } pageInfo { hasNextPage } } }`, {}, last),
      'gateway GraphQL': (last) => graphql(`{ queues(first: 50, orderBy: NAME_ASC) { nodes { ${QUEUE} } pageInfo { hasNextPage } } }`, {}, last),
    },
  },
  {
    name: 'one-off documents: a queue by a name in the text',
    pick: randomBigQueue,
    goalPeer: 'graphql-yoga + raw pg',
    prepare: growQueues,
    callers: {
      'graphql-yoga + raw pg': (name) => graphql(`{ queue(name: "${name}") { ${QUEUE} } }`, {}, name),
      'PostGraphile 5': (name) => graphql(`{ queueByName(name: "${name}") { ${QUEUE} } }`, {}, name),
      'gateway GraphQL': (name) => graphql(`{ queue(name: "${name}") { ${QUEUE} } }`, {}, name),
    },
  },
];

interface Row {
  bench: string;
  door: Door;
  requestsPerSecond: number;
  /** Median of the rounds' p99 latencies. */
  p99: number;
  cpuMsPerRequest: number;
  postgresCpuMsPerRequest: number;
  /** req/s in each round, in round order. */
  roundRates: number[];
  /** A gateway's writes: queues per group-commit statement (gateway_group_commit_items) over its measured slices. */
  queuesPerStatement: number | undefined;
}

/** One target of a case: its caller and server, and what its rounds added up to. */
interface Target {
  door: Door;
  server: Child;
  load(duration: number): Promise<Result>;
  requests: number;
  seconds: number;
  cpuSeconds: number;
  postgresCpuSeconds: number;
  p99s: number[];
  roundRates: number[];
  /** Group-commit statements and the queues they wrote, over the measured slices (a gateway's writes). */
  commits: { statements: number; items: number } | undefined;
}

function target(bench: BenchCase, door: Door, server: Child): Target {
  const doorIndex = DOORS.indexOf(door);
  const caller = callerOf(bench, door)!;
  const load = (duration: number) =>
    autocannon({ url: server.url, connections: CONNECTIONS, duration, requests: [{ setupRequest: (req) => ({ ...req, ...caller(bench.pick(doorIndex)).request }) }] });
  const commits = bench.name.startsWith('write') && door.startsWith('gateway') ? { statements: 0, items: 0 } : undefined;
  return { door, server, load, requests: 0, seconds: 0, cpuSeconds: 0, postgresCpuSeconds: 0, p99s: [], roundRates: [], commits };
}

/** A gateway's group-commit histogram for queue creation so far, read off its /metrics (the keyed one wants its key). */
async function queueCommits(server: Child): Promise<{ statements: number; items: number }> {
  const answer = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${benchKey}` }, signal: AbortSignal.timeout(10_000) });
  const text = await answer.text();
  if (!answer.ok) throw new Error(`/metrics: ${answer.status} ${text.slice(0, 200)}`);
  // None yet (no queue created): nothing counted.
  const value = (suffix: string) => sampleOf(text, `gateway_group_commit_items_${suffix}`, 'writer="queue_create"') || 0;
  return { statements: value('count'), items: value('sum') };
}

/** One request through the target first: an error answer stops the bench before anything is measured. */
async function checkAnswer(bench: BenchCase, door: Door, server: Child): Promise<void> {
  const sample = callerOf(bench, door)!(bench.pick(DOORS.indexOf(door)));
  const answer = await fetch(`${server.url}${sample.request.path}`, { method: sample.request.method, headers: sample.request.headers, body: sample.request.body, signal: AbortSignal.timeout(10_000) });
  const text = await answer.text();
  if (!answer.ok || !text.includes(sample.expect) || /"errors?"\s*:/.test(text)) throw new Error(`${door}, ${bench.name}: unexpected answer ${answer.status} ${text.slice(0, 500)}`);
}

async function loadOnce(bench: BenchCase, t: Target, seconds: number): Promise<void> {
  const waited = await settle();
  if (waited > 1000) console.error(`bench: ${Math.round(waited)} ms for the machine to settle before ${t.door}`);
  const commitsBefore = t.commits && (await queueCommits(t.server));
  const pid = t.server.process.pid!;
  const cpuBefore = cpuSeconds(pid);
  const postgresBefore = postgresCpuSeconds();
  const result = await t.load(seconds);
  if (result.non2xx || result.errors || result.timeouts) throw new Error(`${t.door}, ${bench.name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  t.cpuSeconds += cpuSeconds(pid) - cpuBefore;
  t.postgresCpuSeconds += postgresCpuSeconds() - postgresBefore;
  if (t.commits && commitsBefore) {
    const after = await queueCommits(t.server);
    t.commits.statements += after.statements - commitsBefore.statements;
    t.commits.items += after.items - commitsBefore.items;
  }
  t.requests += result.requests.total;
  t.seconds += result.duration;
  t.p99s.push(result.latency.p99);
  t.roundRates.push(result.requests.total / result.duration);
}

/**
 * Warms every target up, then loads them in ROUNDS interleaved rounds, each in its own order (roundOrders), so that a
 * target follows a different neighbour from one round to the next; the machine settles before each slice.
 */
async function measure(bench: BenchCase, targets: Target[]): Promise<Row[]> {
  for (const t of targets) {
    console.error(`bench: ${bench.name} / ${t.door} (warm-up)`);
    await checkAnswer(bench, t.door, t.server);
    if (WARM_UP_SECONDS > 0) await t.load(WARM_UP_SECONDS);
  }
  const orders = roundOrders(targets, ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    console.error(`bench: ${bench.name}, round ${round + 1} of ${ROUNDS}`);
    for (const t of orders[round]!) await loadOnce(bench, t, SECONDS / ROUNDS);
  }
  return targets.map((t) => ({
    bench: bench.name,
    door: t.door,
    requestsPerSecond: t.requests / t.seconds,
    p99: median(t.p99s),
    cpuMsPerRequest: (t.cpuSeconds * 1000) / Math.max(1, t.requests),
    postgresCpuMsPerRequest: (t.postgresCpuSeconds * 1000) / Math.max(1, t.requests),
    roundRates: t.roundRates,
    queuesPerStatement: t.commits && t.commits.items / Math.max(1, t.commits.statements),
  }));
}

/**
 * An OTLP/HTTP receiver on loopback that takes every export (JSON or protobuf) and counts the spans of JSON ones. It
 * runs in the bench's process, beside the load generator: it counts in the bytes as they arrive (a span's `"spanId"`
 * key), without joining or decoding them, so that what it costs the load generator stays small beside what exporting
 * costs the gateway.
 */
async function startOtlpReceiver(): Promise<{ url: string; readonly spans: number; close(): Promise<void> }> {
  let spans = 0;
  const key = Buffer.from('"spanId"');
  const server = createServer((req, res) => {
    let tail = Buffer.alloc(0);
    const count = (bytes: Buffer) => {
      for (let at = bytes.indexOf(key); at !== -1; at = bytes.indexOf(key, at + key.length)) spans++;
    };
    req.on('data', (chunk: Buffer) => {
      // A key split between two chunks: the last bytes of one (too few to hold a key) and the start of the next.
      if (tail.length) count(Buffer.concat([tail, chunk.subarray(0, key.length - 1)]));
      count(chunk);
      const last = chunk.length >= key.length - 1 ? chunk : Buffer.concat([tail, chunk]);
      tail = Buffer.from(last.subarray(Math.max(0, last.length - (key.length - 1))));
    });
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get spans() {
      return spans;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

let receiver: Awaited<ReturnType<typeof startOtlpReceiver>> | undefined;

async function main(): Promise<void> {
  const db = await freshDatabase('postgres', ADMIN_URL);
  const servers: Partial<Record<Door, Child>> = {};
  try {
    const database = await openDatabase({ databaseUrl: db.url, dataDir: 'unused' });
    await applyMigrations(database.adapterFactory);
    benchKey = (await createApiKey(database.prisma, { name: 'bench', scopes: ['admin:all'] })).key;
    await database.close();
    const client = new pg.Client({ connectionString: db.url });
    client.on('error', () => undefined); // dropping the database at the end ends it
    await client.connect();
    await client.query(GENERATE_QUEUES, [QUEUES]);
    await client.query(GENERATE_ORGANIZATIONS, [FIRST_ORGANIZATION, ORGANIZATIONS]);
    await client.query(GENERATE_PERSONS, [FIRST_PERSON, PERSONS]);
    await client.query(GENERATE_EMPLOYMENTS, [FIRST_PERSON, PERSONS, FIRST_ORGANIZATION, ORGANIZATIONS, EMPLOYMENTS_PER_PERSON]);
    await client.query('ANALYZE');

    // Every server as deployed: NODE_ENV=production (graphql-js drops its development checks; PostGraphile's Grafast
    // runs in production mode unless GRAPHILE_ENV says otherwise).
    const peerEnv = { DATABASE_URL: db.url, NODE_ENV: 'production' };
    servers['bare node:http + pg'] = await startChild('bench/peers/bare-pg.mjs', [], peerEnv);
    servers['graphql-yoga + raw pg'] = await startChild('bench/peers/yoga-pg.mjs', [], peerEnv);
    servers['PostGraphile 5'] = await startChild('bench/peers/postgraphile.mjs', [], peerEnv);
    const gateway = await startGateway({ DATABASE_URL: db.url, MIGRATE_ON_START: 'off' });
    servers['gateway GraphQL'] = gateway;
    servers['gateway legacy'] = gateway;
    const selected = (door: Door) => !process.env.BENCH_DOORS || process.env.BENCH_DOORS.split(',').some((d) => door.startsWith(d));
    if ((Object.keys(KEYED) as KeyedDoor[]).some(selected)) {
      const keyed = await startGateway({ DATABASE_URL: db.url, MIGRATE_ON_START: 'off', AUTH: 'on', RATE_LIMIT_PER_MINUTE: '1000000000' });
      for (const door of Object.keys(KEYED) as KeyedDoor[]) servers[door] = keyed;
    }
    if ([...Object.keys(TRACED), ...Object.keys(PRODUCTION)].some((door) => selected(door as Door))) receiver = await startOtlpReceiver();
    if ((Object.keys(TRACED) as TracedDoor[]).some(selected)) {
      const traced = await startGateway({ DATABASE_URL: db.url, MIGRATE_ON_START: 'off', OTEL_EXPORTER_OTLP_ENDPOINT: receiver!.url });
      for (const door of Object.keys(TRACED) as TracedDoor[]) servers[door] = traced;
    }
    if ((Object.keys(PRODUCTION) as ProductionDoor[]).some(selected)) {
      const production = await startGateway({ DATABASE_URL: db.url, MIGRATE_ON_START: 'off', AUTH: 'on', RATE_LIMIT_PER_MINUTE: '1000000000', OTEL_EXPORTER_OTLP_ENDPOINT: receiver!.url });
      for (const door of Object.keys(PRODUCTION) as ProductionDoor[]) servers[door] = production;
    }

    const rows: Row[] = [];
    for (const bench of CASES) {
      if (ONLY && !ONLY.some((only) => bench.name.startsWith(only))) continue;
      await bench.prepare?.(client);
      const doors = DOORS.filter((door) => selected(door) && callerOf(bench, door) !== undefined);
      rows.push(...(await measure(bench, doors.map((door) => target(bench, door, servers[door]!)))));
      if (bench.name.startsWith('write')) {
        // Every acknowledged write is in the table (the sample, the warm-up and the measured rounds).
        for (const door of doors) {
          const { rows: counted } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "Queue" WHERE name LIKE $1`, [`w${DOORS.indexOf(door)}-%`]);
          if (Number(counted[0]!.n) < 1) throw new Error(`${door}: no queue was written`);
        }
      }
    }
    await client.end();

    console.log(`\nbench:graphql: ${CONNECTIONS} connections, ${SECONDS} s per target in ${ROUNDS} interleaved rounds after ${WARM_UP_SECONDS} s of warm-up, one PostgreSQL database, Node ${process.version}\n`);
    console.log(`| case | target | req/s | p99 ms | server CPU ms/req | PostgreSQL CPU ms/req | vs ${BASELINE} |`);
    console.log('|---|---|---:|---:|---:|---:|---:|');
    for (const row of rows) {
      const base = rows.find((r) => r.bench === row.bench && r.door === BASELINE);
      const ratio = base ? `${(row.requestsPerSecond / base.requestsPerSecond).toFixed(2)}x` : 'not measured';
      console.log(`| ${row.bench} | ${row.door} | ${row.requestsPerSecond.toFixed(0)} | ${row.p99} | ${row.cpuMsPerRequest.toFixed(3)} | ${row.postgresCpuMsPerRequest.toFixed(3)} | ${ratio} |`);
    }
    const grouped = rows.filter((row) => row.queuesPerStatement !== undefined);
    // Fewer queues per statement is more of PostgreSQL's work per write: what a door's own per-request cost does to
    // the group commit (src/db/group-commit.ts) shows here.
    if (grouped.length) console.log(`\nqueues per group-commit INSERT (gateway_group_commit_items): ${grouped.map((row) => `${row.door} ${row.queuesPerStatement!.toFixed(1)}`).join(', ')}`);
    console.log('\ngoals: each gateway door >= 1.0x its case\'s peer (PostGraphile 5 unless named) in every case; the legacy door >= the GraphQL door');
    for (const bench of CASES) {
      const of = (door: Door) => rows.find((r) => r.bench === bench.name && r.door === door)?.requestsPerSecond;
      const peer = bench.goalPeer ?? BASELINE;
      const base = of(peer);
      const viaGraphql = of('gateway GraphQL');
      const viaLegacy = of('gateway legacy');
      if (base === undefined || viaGraphql === undefined) continue;
      const legacy = viaLegacy === undefined ? '' : `  legacy ${(viaLegacy / base).toFixed(2)}x  legacy/GraphQL ${(viaLegacy / viaGraphql).toFixed(2)}`;
      const met = viaGraphql >= base && (viaLegacy === undefined || (viaLegacy >= base && viaLegacy >= viaGraphql));
      console.log(`  ${bench.name.padEnd(48)} vs ${peer}: GraphQL ${(viaGraphql / base).toFixed(2)}x${legacy}  ${met ? 'met' : 'NOT met'}`);
    }
    /** Each variant door against the same door of the plain gateway, in every case. */
    const variantGoal = (goal: string, variants: Partial<Record<Door, PlainDoor>>, against: string, minimum: number, extra = '') => {
      console.log(goal);
      for (const bench of CASES) {
        for (const [door, plainDoor] of Object.entries(variants) as [Door, PlainDoor][]) {
          const variantRow = rows.find((r) => r.bench === bench.name && r.door === door);
          const plainRow = rows.find((r) => r.bench === bench.name && r.door === plainDoor);
          if (variantRow === undefined || plainRow === undefined) continue;
          const [variant, plain] = [variantRow.requestsPerSecond, plainRow.requestsPerSecond];
          // Each round's two slices, taken a few seconds apart, side by side: a host that slows down for a while
          // moves the whole run's ratio, less so the rounds' own.
          const byRound = variantRow.roundRates.map((rate, round) => rate / plainRow.roundRates[round]!);
          const rounds = `rounds ${byRound.map((ratio) => ratio.toFixed(2)).join(' ')}, median ${median(byRound).toFixed(2)}x`;
          console.log(`  ${bench.name.padEnd(40)} ${door.padEnd(32)} ${(variant / plain).toFixed(2)}x ${against}  ${variant >= minimum * plain ? 'met' : 'NOT met'}  (${rounds})${extra}`);
        }
      }
    };
    variantGoal('goal: the gateway with tracing on (exporting to a loopback OTLP receiver) >= 0.75x the same door untraced', TRACED, 'untraced', 0.75, `  (${receiver?.spans ?? 0} spans received in all)`);
    variantGoal('goal: the gateway with AUTH=on, an API key and the rate limit >= 0.9x the same door with AUTH=off', KEYED, 'AUTH=off', 0.9);
    // Both prices at once: no goal of its own beyond the two above (0.9 x 0.75), and the one every door keeps, above
    // PostGraphile in every case.
    variantGoal('keyed + traced (production\'s shape) >= 0.675x the same door plain (both goals above at once)', PRODUCTION, 'plain', 0.9 * 0.75);
    console.log('goal: keyed + traced (production\'s shape) >= 1.5x PostGraphile 5 where it has the case, else >= 1.0x the case\'s peer');
    for (const bench of CASES) {
      const peer = bench.goalPeer ?? BASELINE;
      const base = rows.find((r) => r.bench === bench.name && r.door === peer)?.requestsPerSecond;
      for (const door of Object.keys(PRODUCTION) as ProductionDoor[]) {
        const rate = rows.find((r) => r.bench === bench.name && r.door === door)?.requestsPerSecond;
        if (base === undefined || rate === undefined) continue;
        const minimum = peer === BASELINE ? 1.5 : 1.0;
        console.log(`  ${bench.name.padEnd(48)} ${door.padEnd(32)} ${(rate / base).toFixed(2)}x ${peer}  ${rate >= minimum * base ? 'met' : 'NOT met'}`);
      }
    }
  } finally {
    await receiver?.close();
    const started = new Set(Object.values(servers));
    await Promise.all([...started].map((server) => server.stop()));
    await db.drop();
  }
}

runBench(main);
