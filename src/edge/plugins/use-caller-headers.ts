import type { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { noteCallerHeaders } from '../../http/caller-headers.js';

// Yoga's edge of the caller-header rule (src/http/caller-headers.ts): its Request has the repeated headers joined
// already, so they are noted from node:http's request, before any plugin that runs an operation.

export function useCallerHeaders(): Plugin {
  return {
    onRequest({ request, serverContext }) {
      // Absent when Yoga is called without node:http (yoga.fetch in tests): then there is nothing to tell apart.
      const req = (serverContext as { req?: IncomingMessage }).req;
      if (req?.headersDistinct) noteCallerHeaders(request, req);
    },
  };
}
