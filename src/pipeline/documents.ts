import { parse, validate, type DocumentNode, type GraphQLError, type GraphQLSchema } from 'graphql';
import { createGraphQLError } from '@graphql-tools/utils';
import { LRUCache } from 'lru-cache';
import type { GatewayMetrics } from '../kit/metrics.js';
import { sourceNesting } from './query-limits.js';

// The one cache of documents, by their text: parsed once, validated once. What depends on a document and its
// operation (its shape, its limit verdicts, its compiled function, its runs so far) is kept beside it, keyed by the
// document this cache hands out (src/pipeline/operation.ts operationCache), so it lives as long as its entry. The
// trusted documents (src/pipeline/trusted-documents.ts) are parsed at start-up and kept for good beside the LRU, so
// that a flood of one-off texts never evicts what a front end runs; the same text sent by a key is the same entry.

export interface Documents {
  /** The document of `text`, or the error its parse ends in (GRAPHQL_PARSE_FAILED, HTTP 400). */
  parsed(text: string): { document: DocumentNode } | { error: GraphQLError };
  /** Validation against the schema, once per document (GRAPHQL_VALIDATION_FAILED, HTTP 400). */
  validationErrors(document: DocumentNode): readonly GraphQLError[];
}

export interface DocumentsOptions {
  schema: GraphQLSchema;
  /** GRAPHQL_MAX_DEPTH: bracket nesting is bounded before parsing (graphql-js parses recursively). */
  maxDepth: number;
  /** Documents kept (beyond the pinned ones). */
  max?: number;
  /** Documents kept for good, parsed, by their text (the trusted documents). */
  pinned?: ReadonlyMap<string, DocumentNode> | undefined;
  metrics?: GatewayMetrics | undefined;
}

type Parsed = { document: DocumentNode } | { error: GraphQLError; counted?: true };

export function createDocuments(options: DocumentsOptions): Documents {
  // Brackets also nest arguments and input objects, so the bound is looser than GRAPHQL_MAX_DEPTH.
  const maxNesting = Math.max(64, options.maxDepth * 4);
  const byText = new LRUCache<string, Parsed>({ max: options.max ?? 1000 });
  const validity = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  const pinned = new Map<string, Parsed>([...(options.pinned ?? [])].map(([text, document]) => [text, { document }]));

  const parseText = (text: string): Parsed => {
    if (sourceNesting(text) > maxNesting) {
      options.metrics?.rejected.inc({ reason: 'query_limits' });
      // Not cached (`counted`): each such request is counted as refused.
      return { counted: true, error: createGraphQLError(`The document nests brackets more than ${maxNesting} deep (4 x GRAPHQL_MAX_DEPTH, at least 64).`, { extensions: { code: 'GRAPHQL_PARSE_FAILED', http: { status: 400 } } }) };
    }
    try {
      return { document: parse(text) };
    } catch (error) {
      const parseError = error as GraphQLError;
      return {
        error: createGraphQLError(parseError.message, {
          ...(parseError.source && parseError.positions && { source: parseError.source, positions: parseError.positions }),
          extensions: { ...parseError.extensions, code: 'GRAPHQL_PARSE_FAILED', http: { spec: true, status: 400 } },
        }),
      };
    }
  };

  return {
    parsed(text) {
      let found = pinned.get(text) ?? byText.get(text);
      if (!found) {
        found = parseText(text);
        if (!('counted' in found)) byText.set(text, found);
      }
      return found;
    },
    validationErrors(document) {
      let errors = validity.get(document);
      if (!errors) {
        errors = validate(options.schema, document).map((error) =>
          createGraphQLError(error.message, {
            ...(error.nodes && { nodes: error.nodes }),
            ...(error.source && error.positions && { source: error.source, positions: error.positions }),
            extensions: { ...error.extensions, code: 'GRAPHQL_VALIDATION_FAILED', http: { spec: true, status: 400 } },
          }),
        );
        validity.set(document, errors);
      }
      return errors;
    },
  };
}
