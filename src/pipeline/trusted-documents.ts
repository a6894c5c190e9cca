import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse, validate, type DocumentNode, type GraphQLError, type GraphQLSchema } from 'graphql';
import { createGraphQLError } from '@graphql-tools/utils';
import type { CallerKind, TrustedDocumentsPolicy } from '../kit/trusted-documents-policy.js';

// Trusted (persisted) documents: the manifests a front end's build wrote (codegen's client preset with
// `persistedDocuments: true` writes persisted-documents.json, an object of document id -> document text, the id
// `sha256:<hex of the text>` as in GraphQL over HTTP's persisted documents appendix), loaded once at start-up. A
// request names a listed document by its id (`documentId`) instead of sending its text; TRUSTED_DOCUMENTS says which
// kinds of caller may send text at all. The pipeline's document step (src/pipeline/pipeline.ts) asks both.

export interface TrustedDocuments {
  /** The text of a listed document, by its id; undefined when no manifest lists it. */
  text(id: string): string | undefined;
  /** Whether a caller of this kind may run only listed documents. */
  listedOnly(kind: CallerKind): boolean;
  /** Whether some kind of caller may run only listed documents (else the caller need not be asked). */
  readonly restricts: boolean;
  /** Every listed document, parsed, by its text: the document cache keeps them for good (src/pipeline/documents.ts). */
  readonly parsed: ReadonlyMap<string, DocumentNode>;
  readonly size: number;
}

/** A listed document the schema refuses (a manifest built against another version of the contract). */
export interface InvalidListedDocument {
  manifest: string;
  id: string;
  message: string;
}

const SHA256_ID = /^sha256:([0-9a-f]{64})$/;

/**
 * Reads the manifests, checks each (a JSON object of id -> text; a `sha256:` id must be the hash of its text; every
 * text parses; an id listed twice names one text) and throws an error naming the file and the id otherwise. A
 * document that parses but does not validate against the schema is reported in `invalid`, not refused: it is
 * answered GRAPHQL_VALIDATION_FAILED like any other when a request names it.
 */
export function loadTrustedDocuments(
  options: { paths: readonly string[]; policy: TrustedDocumentsPolicy; schema: GraphQLSchema },
  read: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): { documents: TrustedDocuments; invalid: InvalidListedDocument[] } {
  const byId = new Map<string, { text: string; manifest: string }>();
  const parsed = new Map<string, DocumentNode>();
  const invalid: InvalidListedDocument[] = [];
  for (const path of options.paths) {
    const fail = (message: string): never => {
      throw new Error(`TRUSTED_DOCUMENTS_MANIFESTS: ${path}: ${message}`);
    };
    let manifest: unknown;
    try {
      manifest = JSON.parse(read(path));
    } catch (error) {
      fail((error as Error).message);
    }
    if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) fail('expected a JSON object of document id -> document text');
    for (const [id, text] of Object.entries(manifest as Record<string, unknown>)) {
      if (typeof text !== 'string') fail(`the document of "${id}" is not a string`);
      const document = text as string;
      const sha256 = SHA256_ID.exec(id)?.[1];
      if (id.startsWith('sha256:') && (!sha256 || createHash('sha256').update(document).digest('hex') !== sha256)) {
        fail(`"${id}" is not the SHA-256 of its document (a manifest edited by hand, or written by another tool?)`);
      }
      const earlier = byId.get(id);
      if (earlier && earlier.text !== document) fail(`"${id}" names another document in ${earlier.manifest}`);
      byId.set(id, { text: document, manifest: path });
      if (parsed.has(document)) continue;
      let node: DocumentNode;
      try {
        node = parse(document);
      } catch (error) {
        return fail(`the document of "${id}" does not parse: ${(error as GraphQLError).message}`);
      }
      parsed.set(document, node);
      const errors = validate(options.schema, node);
      if (errors.length) invalid.push({ manifest: path, id, message: errors[0]!.message });
    }
  }
  const policy = options.policy;
  return {
    invalid,
    documents: {
      text: (id) => byId.get(id)?.text,
      listedOnly: (kind) => policy.has(kind),
      restricts: policy.size > 0,
      parsed,
      size: byId.size,
    },
  };
}

/** The refusal of an id no manifest lists. */
export function documentNotFound(id: string): GraphQLError {
  return createGraphQLError(`No trusted document has the id "${id.length > 80 ? `${id.slice(0, 80)}…` : id}".`, {
    extensions: { code: 'PERSISTED_DOCUMENT_NOT_FOUND', http: { status: 400 } },
  });
}

/** The refusal of a document's text from a caller that may run listed documents only. */
export function documentRequired(kind: CallerKind): GraphQLError {
  const who = kind === 'token' ? 'A caller with a token' : kind === 'key' ? 'A caller with an API key' : 'A caller without a key';
  return createGraphQLError(`${who} may run trusted documents only: send "documentId" (the id its manifest lists) instead of "query".`, {
    extensions: { code: 'PERSISTED_DOCUMENT_REQUIRED', http: { status: 400 } },
  });
}
