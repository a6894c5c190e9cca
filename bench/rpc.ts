import { randomBytes } from 'node:crypto';
import { startChild, startGateway, load, printTable } from './lib.js';

// bench:rpc — getQueue through its legacy JSON-RPC path, the same through /graphql, and a bare node:http server
// answering the same JSON, one after another against processes of their own, with the same load tool.
// Uses DATABASE_URL when set, else a fresh embedded database. Goal: legacy costs at most 15% more than GraphQL.

const duration = Number(process.env.BENCH_SECONDS ?? 10);
const env: Record<string, string> = process.env.DATABASE_URL
  ? { DATABASE_URL: process.env.DATABASE_URL }
  : { DATA_DIR: `memory://bench-${randomBytes(3).toString('hex')}` };
const gateway = await startGateway(env);
const headers = { 'content-type': 'application/json' };
try {
  const created = await fetch(`${gateway.url}/createQueue`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'createQueue', params: { name: 'bench', rate: 5, labels: ['bench'] }, id: '1' }),
  });
  const legacyBody = JSON.stringify({ jsonrpc: '2.0', method: 'getQueue', params: { name: 'bench' }, id: '1' });
  const sample = await (await fetch(`${gateway.url}/getQueue`, { method: 'POST', headers, body: legacyBody })).text();
  if (!created.ok || !sample.includes('"result"')) throw new Error(`setup failed: ${sample}`);
  const graphqlBody = JSON.stringify({
    query: 'query GetQueue($name: String!) { queue(name: $name) { name description status paused rate labels createTime updateTime } }',
    variables: { name: 'bench' },
  });

  const bare = await startChild('bench/bare-json-server.ts', [], { BARE_BODY: sample });
  const rows = [];
  try {
    // A warm-up so both gateway paths run with hot caches (parsed documents, prepared statements, JIT).
    await load('warm-up', { url: `${gateway.url}/graphql`, method: 'POST', headers, body: graphqlBody, duration: 3 });
    await load('warm-up', { url: `${gateway.url}/getQueue`, method: 'POST', headers, body: legacyBody, duration: 3 });
    rows.push(await load('bare node:http (same JSON)', { url: bare.url, method: 'POST', headers, body: legacyBody, duration }));
    rows.push(await load('GraphQL /graphql', { url: `${gateway.url}/graphql`, method: 'POST', headers, body: graphqlBody, duration }));
    rows.push(await load('legacy /getQueue', { url: `${gateway.url}/getQueue`, method: 'POST', headers, body: legacyBody, duration }));
  } finally {
    await bare.stop();
  }
  printTable(rows, 'GraphQL /graphql');
  const [, graphql, legacy] = rows as [unknown, { requestsPerSecond: number }, { requestsPerSecond: number }];
  const overhead = graphql.requestsPerSecond / legacy.requestsPerSecond - 1;
  console.log(`\nlegacy path costs ${(overhead * 100).toFixed(1)}% more per request than GraphQL (goal: at most 15%)`);
} finally {
  await gateway.stop();
}
