import { createClient, type Client, type SubscribePayload } from 'graphql-ws';
import type { TypedDocumentString } from '../gql/graphql';

// The console's typed client (docs/typed-client.md): queries and mutations over fetch, subscriptions over
// graphql-ws, all on the gateway that served the page, with the API key the operator typed or the access token the
// OpenID provider gave (`Authorization: Bearer` and the connection_init payload alike). The documents carry their
// result and variable types, so every call is checked by the compiler against schema.graphql; each is sent by its id
// in the console's manifest, which the gateway trusts whenever it serves the console, so it runs for every kind of
// caller, tokens (held to trusted documents by default) included.

/** A refusal or failure as the gateway worded it. */
export class GatewayError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly status: number,
  ) {
    super(message);
  }
}

export type Document<R, V> = TypedDocumentString<R, V>;

export interface ConsoleClient {
  request<R, V>(document: Document<R, V>, variables: V): Promise<R>;
  /** Calls `onData` with each result until the server completes or the returned function is called. */
  subscribe<R, V>(document: Document<R, V>, variables: V, onData: (data: R) => void, onError?: (error: GatewayError) => void): () => void;
  close(): void;
}

interface GraphQLAnswer {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** The id codegen gave a document (`persistedDocuments`); the generated document holds nothing else. */
function documentId(document: { __meta__?: Record<string, unknown> | undefined }): string {
  const id: unknown = document.__meta__?.hash;
  if (typeof id !== 'string') throw new Error('a document without an id: run the generators again (npm run generate)');
  return id;
}

function errorOf(answer: GraphQLAnswer, status: number): GatewayError | null {
  const first = answer.errors?.[0];
  if (!first) return null;
  return new GatewayError(answer.errors!.map((e) => e.message).join('; '), first.extensions?.code, status);
}

/** `credential`: an API key or an access token; null with AUTH=off. */
export function consoleClient(credential: string | null): ConsoleClient {
  const headers: Record<string, string> = credential ? { authorization: `Bearer ${credential}` } : {};
  let ws: Client | undefined;
  const socket = () =>
    (ws ??= createClient({
      url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
      connectionParams: headers,
      lazy: true,
      // A restarted gateway or a dropped connection: subscriptions come back by themselves.
      retryAttempts: 30,
      shouldRetry: (event) => !(event instanceof CloseEvent && event.code === 4403),
    }));
  return {
    async request(document, variables) {
      let res: Response;
      try {
        res = await fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
          body: JSON.stringify({ documentId: documentId(document), variables }),
        });
      } catch {
        throw new GatewayError('The gateway cannot be reached.', 'NETWORK', 0);
      }
      let answer: GraphQLAnswer;
      try {
        answer = (await res.json()) as GraphQLAnswer;
      } catch {
        throw new GatewayError(`The gateway answered ${res.status} without a GraphQL answer.`, undefined, res.status);
      }
      const error = errorOf(answer, res.status);
      if (error) throw error;
      return answer.data as never;
    },
    subscribe(document, variables, onData, onError) {
      return socket().subscribe<never>(
        // graphql-ws insists on a string `query`: an empty one beside the id.
        { query: '', documentId: documentId(document), variables: variables as Record<string, unknown> } as SubscribePayload,
        {
          next: (result) => {
            const error = errorOf(result as GraphQLAnswer, 200);
            if (error) onError?.(error);
            else if (result.data) onData(result.data as never);
          },
          error: (error) => {
            const reason = error instanceof CloseEvent ? `${error.code} ${error.reason}` : Array.isArray(error) ? error.map((e: { message: string }) => e.message).join('; ') : String(error);
            onError?.(new GatewayError(`Live updates stopped: ${reason}`, 'SUBSCRIPTION', 0));
          },
          complete: () => undefined,
        },
      );
    },
    close() {
      void ws?.dispose();
    },
  };
}
