import type { CodegenConfig } from '@graphql-codegen/cli';

// A front end's codegen: the gateway's contract (this repository's schema.graphql; a front-end repository would name
// `http://localhost:4000/graphql`, with `headers: { Authorization: 'Bearer <key>' }` when AUTH is on) and the
// operations written in the front end's own sources, typed by the client preset into src/gql/. `persistedDocuments`
// also writes src/gql/persisted-documents.json, the manifest of trusted documents the gateway loads
// (TRUSTED_DOCUMENTS_MANIFESTS), and gives each document its id (`__meta__.hash`) so that the client sends the id.
const config: CodegenConfig = {
  schema: '../../schema.graphql',
  documents: ['src/**/*.ts', '!src/gql/**'],
  ignoreNoDocuments: true,
  emitLegacyCommonJSImports: false,
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false, persistedDocuments: true },
      config: { useTypeImports: true, enumsAsTypes: true, scalars: { DateTime: 'string', JSON: 'unknown' } },
    },
  },
};
export default config;
