import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createYoga, processRegularResult, type YogaServerInstance } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { AppServices } from '../services.js';
import type { Api } from '../api/operations.js';
import { logFailure } from '../api/log-failure.js';
import { maskError } from '../pipeline/mask-error.js';
import { EXTRA_PARAM_NAMES } from '../pipeline/params.js';
import { browserRefusal } from '../http/browser-policy.js';
import { listen } from '../http/listen.js';
import { takesUpgrade } from '../http/request-target.js';
import { answerClientError, refuseConnect } from '../http/client-error.js';
import { ReasonPhraseResponse } from '../http/reason-phrase.js';
import { frontDoor } from './front-door.js';
import { nodeEdge } from './node.js';
import { startWsServer } from './ws.js';
import { useHealth } from './plugins/use-health.js';
import { useLegacyRoutes } from './plugins/use-legacy-routes.js';
import { usePipeline } from './plugins/use-pipeline.js';
import { eventStreamOutput } from '../events/subscription-registry.js';
import { useKeyFirst } from './plugins/use-key-first.js';
import { useRequestContext } from './plugins/use-request-context.js';
import { useMetricsEndpoint } from './plugins/use-metrics-endpoint.js';
import { useCachePolicy } from './plugins/use-cache-policy.js';
import { useBodyLimit } from './plugins/use-body-limit.js';
import { corsFor, useBrowserPolicy } from './plugins/use-browser-policy.js';
import { useNotFound } from './plugins/use-not-found.js';
import { useGraphiQL } from './plugins/use-graphiql.js';
import { useConsole } from './plugins/use-console.js';
import { consoleProvider } from './console/sign-in.js';
import { useEventStreamStatus } from './plugins/use-event-stream-status.js';

// The HTTP server and its edges: the front door (target and Host, connection order, lingering close), the node:http
// edge for plain JSON POSTs, Yoga's edge for the rest (GET, SSE, multipart, GraphiQL, the console, CORS, health,
// metrics), and graphql-ws on the same port. Every operation they read runs on the API's one pipeline.

export interface HttpServerOptions {
  config: Config;
  log: Logger;
  services: AppServices;
  api: Api;
  /** The console's manifest of trusted documents, when the console is served and built (its text). */
  consoleManifest: string | null;
  /** /readyz's verdict (src/runtime/readiness.ts). */
  ready: Parameters<typeof useHealth>[0]['ready'];
  /** 'yoga': every HTTP request through Yoga's edge (tests compare the edges). */
  edge?: 'node' | 'yoga' | undefined;
  /** Tracing on: wraps the request listener once, so that each request runs in its HTTP server span. */
  traceRequests?: ((listener: RequestListener) => RequestListener) | undefined;
}

export interface HttpServer {
  url: string;
  port: number;
  yoga: YogaServerInstance<Record<string, unknown>, AppServices>;
  /** Stops accepting and drains within the shutdown grace that began at `startedAt`. */
  drain(startedAt: number): Promise<void>;
}

export async function startHttpServer({ config, log, services, api, consoleManifest, ready, edge, traceRequests }: HttpServerOptions): Promise<HttpServer> {
  const browserPolicy = { corsOrigins: config.CORS_ORIGINS, loopbackHostOnly: config.AUTH === 'off' };
  const failed = logFailure(log);
  const cachePolicy = useCachePolicy({ corsOrigins: config.CORS_ORIGINS });
  const yoga: YogaServerInstance<Record<string, unknown>, AppServices> = createYoga<Record<string, unknown>, AppServices>({
    schema: api.schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // GraphiQL is served by useGraphiQL below (Yoga's own page loads it from a CDN).
    graphiql: false,
    // Only what fails outside the pipeline (a plugin meeting an outage) is masked here; operations are masked there.
    maskedErrors: { maskError },
    // MAX_BODY_BYTES is enforced by useBodyLimit below, before Yoga reads a body. Yoga's own 25 MB limit would pipe
    // every body through a counting stream (a TransformStream, a second Request and an AbortController per request).
    maxRequestBodySize: false,
    // A trusted document's id (GraphQL over HTTP's persisted documents); the pipeline checks it (src/pipeline/params.ts).
    extraParamNames: EXTRA_PARAM_NAMES,
    cors: corsFor(browserPolicy),
    logging: {
      debug: (...args) => log.debug(args.map(String).join(' ')),
      info: (...args) => log.info(args.map(String).join(' ')),
      warn: (...args) => log.warn(args.map(String).join(' ')),
      error: (...args) => failed(args.find((a): a is Error => a instanceof Error), args.map(String).join(' ')),
    },
    context: () => services,
    plugins: [
      useRequestContext({ digest: api.digest, observer: api.observer }),
      cachePolicy,
      useBrowserPolicy(browserPolicy),
      useMetricsEndpoint({ metrics: services.metrics, auth: config.AUTH }),
      useEventStreamStatus(),
      ...(config.GRAPHIQL ? [useGraphiQL({ endpoint: '/graphql', title: 'Public-services gateway', auth: config.AUTH })] : []),
      ...(config.CONSOLE ? [useConsole({ trustedManifest: consoleManifest, provider: consoleProvider(config, api.schema, consoleManifest) })] : []),
      // With AUTH=on a request without a valid key is 401 before its body or its type is looked at.
      useKeyFirst('/graphql', api.pipeline),
      useBodyLimit({ endpoint: '/graphql', maxBodyBytes: config.MAX_BODY_BYTES }),
      usePipeline({ pipeline: api.pipeline, subscriber: (res) => services.subscriptions.connect(eventStreamOutput(res)) }),
      useHealth({ ready }),
      useLegacyRoutes({ door: api.legacy, maxBodyBytes: config.MAX_BODY_BYTES }),
      useNotFound({ graphqlEndpoint: '/graphql', graphiql: config.GRAPHIQL, console: config.CONSOLE }),
    ],
  });
  // Plain JSON POSTs (legacy paths and /graphql) are answered on node:http (src/edge/node.ts); the rest by Yoga.
  const overNode =
    edge === 'yoga'
      ? undefined
      : nodeEdge({
          legacy: api.legacy,
          pipeline: api.pipeline,
          graphqlEndpoint: '/graphql',
          maxBodyBytes: config.MAX_BODY_BYTES,
          browserPolicy,
          Response: yoga.fetchAPI.Response,
          observer: api.observer,
          answerHeaders: cachePolicy.nodeAnswerHeaders,
          answer: (result, mediaType) => processRegularResult(result as ExecutionResult, yoga.fetchAPI, mediaType) as Response,
          onError: (error) => log.error({ err: error }, 'an edge failed to answer'),
        });
  const traced = traceRequests ?? ((listener: RequestListener) => listener);
  const server: Server = createServer(
    {
      ServerResponse: ReasonPhraseResponse,
      // A slow client (headers or body trickling in) is answered 408 and cut; an answer being streamed (SSE) is not
      // a request being received, and an upgraded socket (graphql-ws) has left the HTTP parser: neither is cut.
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      // How often node:http looks for such clients (its default, 30 s, would let them stay that much longer).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.HTTP_HEADERS_TIMEOUT_MS / 4))),
      // Only a WebSocket upgrade of /graphql is taken; any other (h2c from `curl --http2`) is served over HTTP/1.1.
      shouldUpgradeCallback: (req) => takesUpgrade(req, '/graphql'),
      // A missing Host is the front door's 400 (JSON, request id), not node:http's empty one.
      requireHostHeader: false,
    },
    traced(
      frontDoor({
        browserPolicy,
        digest: api.digest,
        observer: api.observer,
        answerHeaders: cachePolicy.nodeAnswerHeaders,
        // Yoga's plugins read the request's context from its server context (src/edge/plugins/use-request-context.ts).
        serve: overNode
          ? (req, res, requestContext) => overNode(req, res, requestContext) || void yoga(req, res, { requestContext })
          : (req, res, requestContext) => void yoga(req, res, { requestContext }),
      }),
    ),
  );
  server.on('clientError', answerClientError(log));
  server.on('connect', refuseConnect(log));
  await listen(server, config.PORT, config.HOST);
  // Attached only once the port is open: a WebSocketServer re-emits its HTTP server's errors, so a busy port would
  // also surface as graphql-ws's "Internal error emitted on the WebSocket server" with a stack.
  const wsServer = startWsServer({ server, pipeline: api.pipeline, services, identifier: api.identifier, digest: api.digest, observer: api.observer, acceptUpgrade: (req) => browserRefusal(browserPolicy, { host: req.headers.host, origin: req.headers.origin }) === null });
  const port = (server.address() as AddressInfo).port;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    port,
    yoga,
    async drain(startedAt) {
      // The HTTP side keeps answering through SHUTDOWN_READY_DELAY_MS (so load balancers see /readyz 503), then drains.
      if (config.SHUTDOWN_READY_DELAY_MS > 0) await new Promise((r) => setTimeout(r, config.SHUTDOWN_READY_DELAY_MS));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await wsServer.dispose();
      // Requests in flight may finish within half the grace time; then open streams (SSE) are cut.
      const cut = setTimeout(() => server.closeAllConnections(), Math.max(0, startedAt + Math.floor(config.SHUTDOWN_GRACE_MS / 2) - Date.now()));
      await closed;
      clearTimeout(cut);
    },
  };
}
