import { z } from 'zod';
import type { HttpRoute } from './http-route.js';
import { methodOf, type RpcRoute } from './route.js';

// OpenAPI 3.1 of every legacy path, derived from the route tables (never written by hand).

type JsonSchema = Record<string, unknown>;

function schemaOf(type: z.ZodType): JsonSchema {
  const schema = z.toJSONSchema(type, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete schema.$schema;
  return schema;
}

const rpcErrorSchema: JsonSchema = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'integer', description: 'JSON-RPC 2.0 code, or an application code listed in docs/api.md' },
    message: { type: 'string' },
    data: { type: 'object', properties: { code: { type: 'string' }, fields: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } } } } },
  },
};

function rpcOperation(route: RpcRoute): JsonSchema {
  const id = { type: ['string', 'number', 'null'] };
  const params = schemaOf(route.params);
  return {
    post: {
      operationId: methodOf(route),
      tags: [route.area],
      summary: route.summary,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['method'],
              properties: {
                jsonrpc: { const: '2.0' },
                method: { const: methodOf(route) },
                params,
                ...(route.paramsMayComeAsResult && { result: { ...params, description: 'Accepted in place of params, as the spec shows for this request.' } }),
                id,
              },
            },
          },
        },
      },
      responses: {
        '200': {
          description: 'A JSON-RPC answer: `result` (with `rowsCount` on searches), or `error`.',
          content: {
            'application/json': {
              schema: {
                oneOf: [
                  { type: 'object', required: ['jsonrpc', 'id', 'result'], properties: { jsonrpc: { const: '2.0' }, id, result: {}, rowsCount: { type: 'integer' } } },
                  { type: 'object', required: ['jsonrpc', 'id', 'error'], properties: { jsonrpc: { const: '2.0' }, id, error: rpcErrorSchema } },
                ],
              },
            },
          },
        },
        '413': { description: 'The body is over MAX_BODY_BYTES.' },
      },
    },
  };
}

function httpOperation(route: HttpRoute): JsonSchema {
  const input = schemaOf(route.input) as { properties?: Record<string, { properties?: Record<string, JsonSchema>; required?: string[] }> };
  const parameters = (['path', 'query', 'headers'] as const).flatMap((part) => {
    const section = input.properties?.[part];
    return Object.entries(section?.properties ?? {}).map(([name, schema]) => ({
      name,
      in: part === 'headers' ? 'header' : part,
      required: part === 'path' || (section?.required ?? []).includes(name),
      schema,
    }));
  });
  const body = input.properties?.body;
  return {
    [route.method.toLowerCase()]: {
      operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      tags: [route.area],
      summary: route.summary,
      parameters,
      ...(body && route.method !== 'GET' && { requestBody: { required: true, content: { 'application/json': { schema: body } } } }),
      responses: { '200': { description: 'Success.' }, '400': { description: 'Invalid input; every bad field is named.' }, '404': { description: 'Not found.' } },
    },
  };
}

export function buildOpenApi(rpcRoutes: RpcRoute[], httpRoutes: HttpRoute[]): JsonSchema {
  const paths: Record<string, JsonSchema> = {};
  for (const route of rpcRoutes) paths[route.path] = rpcOperation(route);
  for (const route of httpRoutes) paths[route.path] = { ...paths[route.path], ...httpOperation(route) };
  return {
    openapi: '3.1.0',
    info: { title: 'Public-services gateway: legacy paths', version: '1', description: 'Generated from the route tables in src/rest/.' },
    paths,
  };
}
