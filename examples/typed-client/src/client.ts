import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type DocumentNode } from 'graphql';
import { createClient, type Client, type SubscribePayload } from 'graphql-ws';

// A minimal typed client: results and variables are checked by the compiler from the documents' types, over fetch
// for queries and mutations and graphql-ws for subscriptions (a subscription ends when the server completes it).
// A document codegen gave an id (`persistedDocuments`) is sent by its id, the trusted document the gateway's
// manifest lists; one without is sent as text.

/** The id codegen's client preset puts on a document with `persistedDocuments: true`. */
const idOf = (document: DocumentNode): string | undefined => (document as DocumentNode & { __meta__?: { hash?: string } }).__meta__?.hash;

/** The parameters that name the document: its id, else its text. */
const paramsOf = (document: DocumentNode): { documentId: string } | { query: string } => {
  const documentId = idOf(document);
  return documentId ? { documentId } : { query: print(document) };
};

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
        body: JSON.stringify({ ...paramsOf(document), variables }),
      });
      const body = (await res.json()) as { data?: unknown; errors?: { message: string }[] };
      if (body.errors?.length) throw new Error(body.errors.map((e) => e.message).join('; '));
      return body.data as never;
    },
    async *subscribe(document, variables) {
      ws ??= createClient({ url: `${url.replace(/^http/, 'ws')}/graphql`, connectionParams: headers, retryAttempts: 0 });
      // graphql-ws insists on a string `query`: an empty one beside the id.
      const payload = { query: '', ...paramsOf(document), variables } as SubscribePayload;
      for await (const result of ws.iterate(payload)) {
        if (result.errors?.length) throw new Error(result.errors.map((e) => e.message).join('; '));
        yield result.data as never;
      }
    },
    async close() {
      await ws?.dispose();
    },
  };
}
