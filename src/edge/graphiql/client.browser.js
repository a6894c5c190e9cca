// The browser side of the gateway's GraphiQL page (served as /graphiql/client.<hash>.js; plain browser JavaScript,
// no build step). Two jobs: a GraphiQL fetcher that sends the Headers tab with every operation, and starting
// GraphiQL with the options the page carries as JSON (functions cannot travel in JSON).
//
// Yoga's own GraphiQL fetcher sends the Headers tab over HTTP but not over graphql-ws, and retries a refused socket
// forever; an API-key gateway refuses a socket without a key, so GraphiQL would spin. Here a subscription opens its
// own graphql-ws socket with the Headers tab as the connection_init payload (where the gateway reads Authorization,
// X-Api-Key and X-IdpScopes), and any close of that socket ends the subscription with an error GraphiQL shows.
(function () {
  'use strict';

  var NAME_CHAR = /[_A-Za-z0-9]/;

  /**
   * The type ('query', 'mutation' or 'subscription') of the operation the gateway will run: the one named
   * operationName, else the document's only operation. Null when there is no such operation or the choice is
   * ambiguous; the gateway then answers with the GraphQL error. Comments and strings are skipped, so braces or
   * keywords inside them do not count; only definitions at the top level of the document are looked at.
   */
  function selectedOperationType(source, operationName) {
    var operations = [];
    var depth = 0;
    var inHeader = false; // between `query|mutation|subscription|fragment` and its selection set
    var expectName = false; // the word right after an operation keyword is the operation's name
    var i = 0;
    var n = source.length;
    while (i < n) {
      var c = source.charAt(i);
      if (c === '#') {
        while (i < n && source.charAt(i) !== '\n' && source.charAt(i) !== '\r') i++;
        continue;
      }
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === ',' || c === '\ufeff') {
        i++;
        continue;
      }
      if (c === '"') {
        if (source.startsWith('"""', i)) {
          i += 3;
          while (i < n && !source.startsWith('"""', i)) i += source.startsWith('\\"""', i) ? 4 : 1;
          i += 3;
        } else {
          i++;
          while (i < n && source.charAt(i) !== '"' && source.charAt(i) !== '\n' && source.charAt(i) !== '\r') i += source.charAt(i) === '\\' ? 2 : 1;
          i++;
        }
        expectName = false;
        continue;
      }
      if (NAME_CHAR.test(c)) {
        var start = i;
        while (i < n && NAME_CHAR.test(source.charAt(i))) i++;
        var word = source.slice(start, i);
        if (depth !== 0) continue;
        if (expectName) {
          operations[operations.length - 1].name = word;
          expectName = false;
        } else if (!inHeader) {
          if (word === 'query' || word === 'mutation' || word === 'subscription') {
            operations.push({ type: word, name: null });
            inHeader = true;
            expectName = true;
          } else if (word === 'fragment') {
            inHeader = true;
          }
        }
        continue;
      }
      expectName = false;
      if (c === '{' || c === '(' || c === '[') {
        if (depth === 0 && c === '{') {
          // A selection set at the top level opens the definition just named, or is a query in shorthand.
          if (inHeader) inHeader = false;
          else operations.push({ type: 'query', name: null });
        }
        depth++;
      } else if (c === '}' || c === ')' || c === ']') {
        depth = Math.max(0, depth - 1);
      }
      i++;
    }
    if (operationName) {
      for (var k = 0; k < operations.length; k++) if (operations[k].name === operationName) return operations[k].type;
      return null;
    }
    return operations.length === 1 ? operations[0].type : null;
  }

  function errorResult(message) {
    return { errors: [{ message: message }] };
  }

  /** A GraphQL answer (or a readable error) from an HTTP response, whatever its status. */
  function resultOfResponse(response) {
    return response.text().then(function (text) {
      try {
        return JSON.parse(text);
      } catch (_notJson) {
        return errorResult('The gateway answered ' + response.status + ' ' + response.statusText + ' with no GraphQL result: ' + text.slice(0, 300));
      }
    });
  }

  function overHttp(endpoint, request, tabHeaders) {
    var headers = new Headers({ 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' });
    // set(), not a merged object: a header typed in another letter case replaces ours instead of being joined to it.
    Object.keys(tabHeaders).forEach(function (name) {
      headers.set(name, String(tabHeaders[name]));
    });
    return fetch(endpoint, { method: 'POST', headers: headers, body: JSON.stringify(request), credentials: 'same-origin' }).then(resultOfResponse);
  }

  /** Why a socket closed, as GraphiQL shows it. */
  function closedMessage(event, acknowledged) {
    var reason = event.reason || (event.code === 1006 ? 'the WebSocket could not be opened or was cut off' : 'no reason given');
    return (acknowledged ? 'Connection to the gateway closed: ' : 'Connection refused by the gateway: ') + event.code + ' ' + reason;
  }

  function failureResult(failure, acknowledged) {
    if (Array.isArray(failure)) return { errors: failure }; // the gateway's `error` message: GraphQL errors
    if (failure && typeof failure.code === 'number') return errorResult(closedMessage(failure, acknowledged));
    return errorResult(failure && failure.message ? failure.message : String(failure));
  }

  function dispose(client) {
    // dispose() rejects with the close that ended the connection, which has been shown already.
    client.dispose().catch(function () {});
  }

  /**
   * An Observable GraphiQL subscribes to. One socket per subscription, no retries: the first close or error ends
   * it with an error result, so a refused key shows at once instead of a spinner.
   */
  function overWebSocket(url, request, tabHeaders) {
    return {
      subscribe: function (observer) {
        var ended = false;
        var acknowledged = false;
        var client;
        function finish(result) {
          if (ended) return;
          ended = true;
          if (result) observer.next(result);
          observer.complete();
          dispose(client);
        }
        client = graphqlWs.createClient({
          url: url,
          connectionParams: tabHeaders,
          lazy: true,
          retryAttempts: 0,
          shouldRetry: function () {
            return false;
          },
          on: {
            connected: function () {
              acknowledged = true;
            },
            // A close the client would otherwise answer by reconnecting (1000 with a subscription open) ends it too.
            closed: function (event) {
              finish(failureResult(event, acknowledged));
            },
          },
        });
        client.subscribe(request, {
          next: function (result) {
            if (!ended) observer.next(result);
          },
          error: function (failure) {
            finish(failureResult(failure, acknowledged));
          },
          complete: function () {
            finish(null);
          },
        });
        return {
          unsubscribe: function () {
            if (ended) return;
            ended = true;
            dispose(client);
          },
        };
      },
    };
  }

  /** GraphiQL's fetcher for the gateway at `endpoint` (a path or URL of this origin). */
  function createFetcher(endpoint) {
    var httpUrl = new URL(endpoint, location.href);
    var wsUrl = new URL(httpUrl.href);
    wsUrl.protocol = httpUrl.protocol === 'https:' ? 'wss:' : 'ws:';
    return function fetcher(params, opts) {
      var tabHeaders = (opts && opts.headers) || {};
      var request = { query: params.query, variables: params.variables, operationName: params.operationName || undefined };
      if (selectedOperationType(params.query, params.operationName) === 'subscription') return overWebSocket(wsUrl.href, request, tabHeaders);
      return overHttp(httpUrl.href, request, tabHeaders);
    };
  }

  globalThis.GatewayGraphiQL = { selectedOperationType: selectedOperationType, createFetcher: createFetcher };

  if (typeof document === 'undefined') return;
  var config = JSON.parse(document.getElementById('graphiql-config').textContent);
  // Monaco asks for its workers by label; they are served beside this script.
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (_moduleId, label) {
      return config.workers[label];
    },
  };
  // GraphiQL's own default, which Yoga turns around: what is typed into the Headers tab (an API key) stays out of the
  // browser's storage until the user switches "Persist headers" on in the settings; that choice is then kept.
  try {
    if (localStorage.getItem('graphiql:shouldPersistHeaders') === null) localStorage.setItem('graphiql:shouldPersistHeaders', 'false');
  } catch (_noStorage) {
    // Storage refused (a private window's policy): GraphiQL keeps nothing anyway.
  }
  document.addEventListener('DOMContentLoaded', function () {
    var options = Object.assign({}, config.graphiql, {
      fetcher: createFetcher(config.endpoint),
      // Yoga would open its welcome text in a new tab on every visit; only a ?query= link should do that.
      initialQuery: new URLSearchParams(location.search).get('query') || undefined,
    });
    YogaGraphiQL.renderYogaGraphiQL(document.getElementById('graphiql'), options);
  });
})();
