import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createClient, type Client } from 'graphql-ws';

// A minimal typed client: results and variables are checked by the compiler from the documents' types, over fetch
// for queries and mutations and graphql-ws for subscriptions (a subscription ends when the server completes it).

export interface GatewayClient {
  request<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V): Promise<R>;
  subscribe<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V): AsyncIterable<R>;
  close(): Promise<void>;
}

export function gatewayClient(url: string, apiKey?: string): GatewayClient {
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  let ws: Client | undefined;
  return {
    async request(document, variables) {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
        body: JSON.stringify({ query: print(document), variables }),
      });
      const body = (await res.json()) as { data?: unknown; errors?: { message: string }[] };
      if (body.errors?.length) throw new Error(body.errors.map((e) => e.message).join('; '));
      return body.data as never;
    },
    async *subscribe(document, variables) {
      ws ??= createClient({ url: `${url.replace(/^http/, 'ws')}/graphql`, connectionParams: headers, retryAttempts: 0 });
      for await (const result of ws.iterate({ query: print(document), variables })) {
        if (result.errors?.length) throw new Error(result.errors.map((e) => e.message).join('; '));
        yield result.data as never;
      }
    },
    async close() {
      await ws?.dispose();
    },
  };
}
