// `tsx bench/alternate.ts <label>=<url>[,<api key>[,<request>[,<pid>]]] ...`: one request loaded against servers that
// are already running (say the same gateway started from two trees), in alternating bursts so that a slow spell of a
// shared host falls on every target alike. Prints each target's req/s over all its bursts and the median of their p99s,
// for a target given its server's pid, the server's CPU time per request over its bursts, and the CPU time of all the
// local PostgreSQL's processes per request during them (whichever server asked).
// ALT_REQUEST (or a target's own <request>) = getQueue (legacy POST /getQueue of queue ALT_QUEUE), graphql (the same
// read over POST /graphql) or graphql-id (that read's document named by its documentId: start the gateway with
// TRUSTED_DOCUMENTS_MANIFESTS naming the file `tsx bench/alternate.ts --manifest` prints) or createQueue (legacy
// POST /createQueue, a new queue name per request) or page (a page of 50 queues without the total over /graphql, as
// bench:graphql asks it: seed the table with GENERATE_QUEUES of bench/fixtures.ts first) or person / person-legacy (a
// random person of ALT_PERSONS (10,000) from oid ALT_FIRST_PERSON (5000000001) with their organizations, over /graphql
// or GET getPersonOrganizationsById, as bench:graphql's nested case asks it: seed with bench/fixtures.ts' GENERATE_*);
// ALT_CONNECTIONS (16), ALT_SECONDS per burst (3), ALT_ROUNDS (5), ALT_WARM_UP_SECONDS (2). ALT_RATE (req/s, all
// connections together) holds every burst to that rate: then the server CPU per request is the comparison, which on a
// shared host moves less than req/s at full load (a server that needs less CPU leaves more to the others).
import { createHash } from 'node:crypto';
import autocannon, { type Result } from 'autocannon';
import { QUEUE_FIELDS } from './fixtures.js';
import { cpuSeconds, median, postgresCpuSeconds, ROUND_SEED, roundOrders, runBench } from './lib.js';

const CONNECTIONS = Number(process.env.ALT_CONNECTIONS ?? 16);
const SECONDS = Number(process.env.ALT_SECONDS ?? 3);
const ROUNDS = Number(process.env.ALT_ROUNDS ?? 5);
const WARM_UP_SECONDS = Number(process.env.ALT_WARM_UP_SECONDS ?? 2);
const RATE = process.env.ALT_RATE ? Number(process.env.ALT_RATE) : undefined;
const QUEUE = process.env.ALT_QUEUE ?? 'bench';
const REQUEST = process.env.ALT_REQUEST ?? 'getQueue';
const PERSONS = Number(process.env.ALT_PERSONS ?? 10_000);
const FIRST_PERSON = Number(process.env.ALT_FIRST_PERSON ?? 5_000_000_001);
const randomPerson = () => String(FIRST_PERSON + Math.floor(Math.random() * PERSONS));
const PERSON = `query($oid: String!) { person(oid: $oid) { oid firstName lastName organizations { chief admin active organization { oid shortName fullName type ogrn inn kpp leg active } } } }`;

const READ = 'query($name: String!) { queue(name: $name) { name rate labels } }';
const PAGE = `{ queues(first: 50, orderBy: NAME_ASC) { nodes { ${QUEUE_FIELDS} } pageInfo { hasNextPage } } }`;
const READ_ID = `sha256:${createHash('sha256').update(READ).digest('hex')}`;

interface Target {
  label: string;
  request: string;
  url: string;
  headers: Record<string, string>;
  pid: number | undefined;
  requests: number;
  seconds: number;
  cpu: number;
  postgresCpu: number;
  p99s: number[];
}

let written = 0;

function requestOf(t: Target) {
  const headers = { 'content-type': 'application/json', ...t.headers };
  if (t.request === 'createQueue') {
    // autocannon asks setupRequest for every request it sends: one new name each.
    const prefix = `alt-${process.pid}-${t.label}-`;
    return { method: 'POST' as const, path: '/createQueue', headers, setupRequest: (req: object) => ({ ...req, body: JSON.stringify({ jsonrpc: '2.0', method: 'createQueue', params: { name: `${prefix}${written++}` }, id: 1 }) }) };
  }
  if (t.request === 'person') {
    return { method: 'POST' as const, path: '/graphql', headers, setupRequest: (req: object) => ({ ...req, body: JSON.stringify({ query: PERSON, variables: { oid: randomPerson() } }) }) };
  }
  if (t.request === 'person-legacy') {
    return { method: 'GET' as const, path: '/', headers: t.headers, setupRequest: (req: object) => ({ ...req, path: `/api/data/getPersonOrganizationsById?oid=${randomPerson()}` }) };
  }
  if (t.request === 'page') return { method: 'POST' as const, path: '/graphql', headers, body: JSON.stringify({ query: PAGE }) };
  if (t.request === 'graphql') return { method: 'POST' as const, path: '/graphql', headers, body: JSON.stringify({ query: READ, variables: { name: QUEUE } }) };
  if (t.request === 'graphql-id') return { method: 'POST' as const, path: '/graphql', headers, body: JSON.stringify({ documentId: READ_ID, variables: { name: QUEUE } }) };
  return { method: 'POST' as const, path: '/getQueue', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'getQueue', params: { name: QUEUE }, id: 1 }) };
}

async function burst(t: Target, seconds: number): Promise<Result> {
  const result = await autocannon({ url: t.url, connections: CONNECTIONS, duration: seconds, requests: [requestOf(t)], ...(RATE && { overallRate: RATE }) });
  if (result.non2xx || result.errors || result.timeouts) throw new Error(`${t.label}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return result;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--manifest') return void console.log(JSON.stringify({ [READ_ID]: READ }));
  const targets = process.argv.slice(2).map((arg): Target => {
    const [label, rest] = [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)];
    const [url, key, request, pid] = rest.split(',');
    const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
    return { label, request: request || REQUEST, url: url!, headers, pid: pid ? Number(pid) : undefined, requests: 0, seconds: 0, cpu: 0, postgresCpu: 0, p99s: [] };
  });
  if (targets.length === 0) throw new Error('usage: tsx bench/alternate.ts <label>=<url>[,<api key>] ...');
  for (const t of targets) if (WARM_UP_SECONDS > 0) await burst(t, WARM_UP_SECONDS);
  for (const order of roundOrders(targets, ROUNDS)) {
    for (const t of order) {
      const cpuBefore = t.pid === undefined ? 0 : cpuSeconds(t.pid);
      const postgresBefore = postgresCpuSeconds();
      const result = await burst(t, SECONDS);
      if (t.pid !== undefined) t.cpu += cpuSeconds(t.pid) - cpuBefore;
      t.postgresCpu += postgresCpuSeconds() - postgresBefore;
      t.requests += result.requests.total;
      t.seconds += result.duration;
      t.p99s.push(result.latency.p99);
    }
  }
  console.log(`\n${[...new Set(targets.map((t) => t.request))].join(' / ')}, ${CONNECTIONS} connections${RATE ? ` at ${RATE} req/s` : ''}, ${ROUNDS} rounds of ${SECONDS} s per target, a new order each round (BENCH_SEED ${ROUND_SEED})\n`);
  console.log('| target | req/s | p99 ms | server CPU ms/req | PostgreSQL CPU ms/req |');
  console.log('|---|---:|---:|---:|---:|');
  for (const t of targets) {
    const cpu = t.pid === undefined ? '' : ((t.cpu * 1000) / t.requests).toFixed(4);
    const postgres = Number.isNaN(t.postgresCpu) ? '' : ((t.postgresCpu * 1000) / t.requests).toFixed(4);
    console.log(`| ${t.label} | ${(t.requests / t.seconds).toFixed(0)} | ${median(t.p99s)} | ${cpu} | ${postgres} |`);
  }
}

runBench(main);
