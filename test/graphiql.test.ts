import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { runInNewContext } from 'node:vm';
import { gunzipSync } from 'node:zlib';
import { getOperationAST, getVariableValues, parse, validate, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchema } from '../src/schema/schema.js';
import { EXAMPLE_TABS } from '../src/edge/graphiql/example-tabs.js';
import { scopeOf } from '../src/access/field-scopes.js';
import { NO_WORKERS, startTestGateway, type TestGateway } from './helpers/gateway.js';

// GraphiQL as the gateway serves it (src/edge/plugins/use-graphiql.ts): the example tabs are valid operations,
// the client script picks the transport by the operation graphql-js would run, and the page and every asset it
// names come from the gateway with cache headers. What a browser does with them: test/graphiql-browser.test.ts.

describe('the example tabs', () => {
  const schema = buildSchema();
  const roots = { query: schema.getQueryType()!, mutation: schema.getMutationType()!, subscription: schema.getSubscriptionType()! };

  it.each(EXAMPLE_TABS.map((tab, i) => [i, tab] as const))('tab %i is valid against the schema, with its variables', (_i, tab) => {
    const document = parse(tab.query);
    expect(validate(schema, document)).toEqual([]);
    const variables: unknown = tab.variables === undefined ? {} : JSON.parse(tab.variables);
    for (const definition of document.definitions) {
      if (definition.kind !== 'OperationDefinition') continue;
      const coerced = getVariableValues(schema, definition.variableDefinitions ?? [], variables as Record<string, unknown>);
      expect(coerced.errors ?? [], definition.name?.value).toEqual([]);
    }
  });

  it('cover every area with a query, a mutation and a task-status subscription; the first tab needs no variables', () => {
    const operations = EXAMPLE_TABS.flatMap((tab) => parse(tab.query).definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition'));
    const rootFields = operations.flatMap((op) =>
      op.selectionSet.selections.flatMap((s) => (s.kind === 'Field' ? [{ type: op.operation, field: roots[op.operation].getFields()[s.name.value]! }] : [])),
    );
    expect(new Set(operations.map((op) => op.operation))).toEqual(new Set(['query', 'mutation', 'subscription']));
    expect(rootFields.some((f) => f.type === 'subscription' && f.field.name === 'taskStatusChanged')).toBe(true);
    const areas = new Set(rootFields.map((f) => scopeOf(f.field)?.split(':')[0]));
    for (const area of ['identity', 'scheduler', 'queues', 'tasks', 'signatures', 'notifications']) expect(areas, area).toContain(area);
    expect(rootFields.some((f) => f.field.name.startsWith('stub'))).toBe(true);
    expect(EXAMPLE_TABS[0]!.variables).toBeUndefined();
  });
});

describe("the client script's choice of transport", () => {
  const sandbox: { GatewayGraphiQL?: { selectedOperationType(query: string, operationName?: string | null): string | null } } = {};
  runInNewContext(readFileSync(new URL('../src/edge/graphiql/client.browser.js', import.meta.url), 'utf8'), sandbox);
  const selected = sandbox.GatewayGraphiQL!.selectedOperationType;

  const cases: [string, string | null, string | null][] = [
    ['{ queues { totalCount } }', null, 'query'],
    ['subscription { taskStatusChanged(queueName: "q", name: "t") { status } }', null, 'subscription'],
    ['# subscription { a }\nmutation M { createQueue(input: {name: "subscription {"}) { name } }', null, 'mutation'],
    ['query A { a } subscription B { b }', 'B', 'subscription'],
    ['query A { a } subscription B { b }', 'A', 'query'],
    ['query A { a } subscription B { b }', null, null],
    ['query A { a } subscription B { b }', 'C', null],
    ['fragment query on Query { a }\nsubscription S { ...query }', null, 'subscription'],
    ['fragment F on Subscription { a }  subscription { ...F }', null, 'subscription'],
    ['query Q($v: In = {subscription: "}"}) @dir(x: ["{"]) { a(s: """ a \\""" } subscription { """) }\nsubscription S { b }', 'S', 'subscription'],
    ['query Q($v: In = {subscription: "}"}) @dir(x: ["{"]) { a(s: """ a \\""" } subscription { """) }\nsubscription S { b }', 'Q', 'query'],
    ['\ufeff  subscription\n#name?\nWatch { a }', 'Watch', 'subscription'],
    ['mutation\tsubscription { a }', 'subscription', 'mutation'],
    ['{ a } { b }', null, null],
    ['', null, null],
  ];

  it.each(cases)('%j (operationName %s) -> %s, as graphql-js picks it', (query, operationName, expected) => {
    expect(selected(query, operationName)).toBe(expected);
    let oracle: string | null = null;
    try {
      oracle = getOperationAST(parse(query), operationName)?.operation ?? null;
    } catch {
      oracle = null; // not a document: no operation to choose
    }
    expect(oracle).toBe(expected);
  });
});

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request with exactly these headers (fetch would add and decode an Accept-Encoding of its own). */
function raw(url: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every URL the page names: src and href attributes, and Monaco's workers in the options it carries. */
function pageUrls(html: string): string[] {
  const attributes = [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
  const config = JSON.parse(/<script type="application\/json" id="graphiql-config">(.*?)<\/script>/s.exec(html)![1]!) as { endpoint: string; workers: Record<string, string> };
  return [...attributes, ...Object.values(config.workers)];
}

describe('the GraphiQL page and its assets over HTTP', () => {
  let t: TestGateway;
  let off: TestGateway;
  beforeAll(async () => {
    [t, off] = await Promise.all([startTestGateway('pglite', { ...NO_WORKERS, AUTH: 'on' }), startTestGateway('pglite', { ...NO_WORKERS, GRAPHIQL: 'off' })]);
  });
  afterAll(() => Promise.all([t?.close(), off?.close()]));

  it('serves the page at /graphql to a browser, never cached, confined to the gateway by its CSP, no key needed', async () => {
    const page = await raw(t.url, '/graphql', { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('public, no-cache');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self';");
    const html = page.body.toString();
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('GraphiQL');
    expect(html).not.toMatch(/(?:src|href)="(?!\/graphiql\/)/);
    expect(html.length).toBeLessThan(20_000);
  });

  it('every asset the page names is served from /graphiql/ with a content type and immutable caching, gzip on request', async () => {
    const html = (await raw(t.url, '/graphql', { accept: 'text/html' })).body.toString();
    const urls = pageUrls(html);
    expect(urls).toHaveLength(8); // icon, stylesheet, graphql-ws, client, GraphiQL, three workers
    let total = 0;
    for (const url of urls) {
      expect(url).toMatch(/^\/graphiql\/[\w.-]+\.[0-9a-f]{12}\.(js|css|ico)$/);
      const plain = await raw(t.url, url);
      expect(plain.status, url).toBe(200);
      expect(plain.headers['content-type'], url).toMatch(url.endsWith('.js') ? /^text\/javascript/ : url.endsWith('.css') ? /^text\/css/ : /^image\/x-icon$/);
      expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
      total += plain.body.length;
      const etag = plain.headers.etag as string;
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      const again = await raw(t.url, url, { 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
      const zipped = await raw(t.url, url, { 'accept-encoding': 'br;q=1, gzip;q=0.8' });
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
      expect((await raw(t.url, url, { 'accept-encoding': '*, gzip;q=0' })).headers['content-encoding']).toBeUndefined();
      expect((await raw(t.url, url, { 'accept-encoding': 'identity, *;q=0.5' })).headers['content-encoding']).toBe('gzip');
    }
    expect(total).toBeGreaterThan(8_000_000); // the whole of GraphiQL, from no CDN
    const head = await raw(t.url, urls[1]!, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
  });

  it('unknown asset names and other methods are not served', async () => {
    expect((await raw(t.url, '/graphiql/graphiql.000000000000.js')).status).toBe(404);
    const html = (await raw(t.url, '/graphql', { accept: 'text/html' })).body.toString();
    const [url] = pageUrls(html).filter((u) => u.endsWith('.js'));
    expect((await raw(t.url, url!, { 'content-type': 'application/json' }, 'POST')).status).toBe(404);
  });

  it('GRAPHIQL=off: no page at /graphql and no assets', async () => {
    const page = await raw(off.url, '/graphql', { accept: 'text/html' });
    expect(page.status).toBe(406); // Yoga: a GraphQL GET that accepts none of its answer types
    expect(page.body.toString()).not.toContain('<!doctype html>');
    const html = (await raw(t.url, '/graphql', { accept: 'text/html' })).body.toString();
    for (const url of pageUrls(html)) expect((await raw(off.url, url)).status, url).toBe(404);
  });
});
