import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { createClient, type SubscribePayload } from 'graphql-ws';

// The app's whole GraphQL client. Every operation is sent by the id codegen gave it (the manifest the gateway was
// deployed with lists it), never by its text: the gateway runs nothing else for a caller with a token. Queries and
// mutations go over fetch, subscriptions over graphql-ws; the user's access token goes with both (Authorization
// header, connection_init payload), read when it is needed.

export class GatewayError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

type Result<R> = { data?: R | null; errors?: { message: string; extensions?: { code?: string } }[] };

/** The id the client preset put on a document generated with `persistedDocuments`. */
function documentId(document: object): string {
  const id = (document as { __meta__?: { hash?: string } }).__meta__?.hash;
  if (!id) throw new Error('a document without an id: run graphql-codegen (persistedDocuments) again');
  return id;
}

function dataOf<R>(result: Result<R>): R {
  const error = result.errors?.[0];
  if (error) throw new GatewayError(error.message, error.extensions?.code);
  return result.data!;
}

export interface Gateway {
  request<R, V>(document: TypedDocumentNode<R, V>, variables: V): Promise<R>;
  /** Each result as it comes; ends when the gateway completes the subscription. */
  subscribe<R, V>(document: TypedDocumentNode<R, V>, variables: V): AsyncIterable<R>;
}

export function connectGateway(url: string, accessToken: () => string): Gateway {
  const ws = createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    // A function: read at every connection, so that a socket opened again (the gateway closes one with 4403 when
    // its token expires) carries the token the app holds then.
    connectionParams: () => ({ authorization: `Bearer ${accessToken()}` }),
  });
  return {
    async request(document, variables) {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${accessToken()}` },
        body: JSON.stringify({ documentId: documentId(document), variables }),
      });
      return dataOf((await res.json()) as Result<never>);
    },
    async *subscribe(document, variables) {
      // graphql-ws insists on a string `query`: an empty one beside the id.
      const payload = { query: '', documentId: documentId(document), variables } as SubscribePayload;
      for await (const result of ws.iterate(payload)) yield dataOf(result as Result<never>);
    },
  };
}
