import type { Plugin } from 'graphql-yoga';

// With AUTH=on, the GraphQL endpoint's 401 before anything else reads the request (src/pipeline/access.ts
// keyFirstAnswer), on Yoga's edge: placed right after the browser rules. The node:http edge asks the same function.

export function useKeyFirst(endpoint: string, keyFirstAnswer: (request: Request, Response: typeof globalThis.Response) => Promise<Response | null>): Plugin {
  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (url.pathname !== endpoint) return;
      const refused = await keyFirstAnswer(request, fetchAPI.Response);
      if (refused) endResponse(refused);
    },
  };
}
