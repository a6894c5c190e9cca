import { pino, type Logger } from 'pino';
import { loadConfig } from '../../src/config.js';
import { startGateway, type Gateway } from '../../src/app.js';
import { freshDatabase, type DatabaseKind, type FreshDatabase } from './databases.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface TestGateway {
  gateway: Gateway;
  url: string;
  db: FreshDatabase;
  close(): Promise<void>;
}

/**
 * A real gateway on a random loopback port over a fresh database; AUTH=off unless `env` says otherwise. `log` (a
 * test that reads what the gateway logs) replaces the silent one.
 */
export async function startTestGateway(kind: DatabaseKind, env: Record<string, string> = {}, { log }: { log?: Logger } = {}): Promise<TestGateway> {
  const db = await freshDatabase(kind);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', AUTH: 'off', OUTBOUND_ALLOW: '127.0.0.1', ...db.env, ...env });
  const gateway = await startGateway(config, { log: log ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
  return {
    gateway,
    url: gateway.url,
    db,
    async close() {
      await gateway.close();
      await db.drop();
    },
  };
}

export interface GraphQLAnswer<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

export async function gql<T = Record<string, any>>(url: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<GraphQLAnswer<T>> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, ...((await res.json()) as object) };
}

export interface RpcAnswer {
  status: number;
  body: any;
}

/** A JSON-RPC call on a documented path, enveloped as legacy clients send it. */
export async function rpc(url: string, method: string, params?: unknown, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<RpcAnswer> {
  const res = await fetch(`${url}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', method, ...(params !== undefined && { params }), id: `${method}-1`, ...extra }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

export async function post(url: string, path: string, body: string, headers: Record<string, string> = {}): Promise<RpcAnswer> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, body: parsed };
}

/** The status code the v1 CMS path answers for a signature (base64). */
export async function checkSignStatus(url: string, cmsBase64: string): Promise<string> {
  const res = await fetch(`${url}/v1/checkSign/cms`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmsBase64 }) });
  return ((await res.json()) as { status: { code: string } }).status.code;
}

/** Environment of a gateway that runs no background worker (tests of the request path only). */
export const NO_WORKERS = { SCHEDULER: 'off', TASK_DISPATCHER: 'off', DELIVERY_WORKER: 'off' } as const;

/** A test gateway that reaches a fresh PostgreSQL database through a TCP relay the test can cut, hold or freeze. */
export interface ProxiedGateway extends TestGateway {
  proxy: TcpProxy;
}

/** Like startTestGateway('postgres'), with the database behind `proxy` (test/helpers/tcp-proxy.ts). */
export async function startProxiedGateway(env: Record<string, string> = {}): Promise<ProxiedGateway> {
  const db = await freshDatabase('postgres');
  const direct = new URL(db.url!);
  const proxy = await startTcpProxy(direct.hostname, Number(direct.port || 5432));
  const relayed = new URL(db.url!);
  relayed.port = String(proxy.port);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', AUTH: 'off', OUTBOUND_ALLOW: '127.0.0.1', ...env, DATABASE_URL: relayed.toString() });
  const gateway = await startGateway(config, { log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
  return {
    gateway,
    url: gateway.url,
    db,
    proxy,
    async close() {
      await gateway.close();
      await proxy.close();
      await db.drop();
    },
  };
}
