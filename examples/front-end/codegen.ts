import type { CodegenConfig } from '@graphql-codegen/cli';

// The app's codegen (docs/typed-client.md): the gateway's contract (this repository's schema.graphql; an app in its
// own repository names the running gateway's /graphql instead) and the operations of src/operations.ts, typed by
// the client preset into src/gql/. `persistedDocuments` also writes src/gql/persisted-documents.json, the manifest
// the gateway is deployed with (TRUSTED_DOCUMENTS_MANIFESTS); `replaceDocumentWithHash` leaves each generated
// document only its id, since the app never sends a text.
const config: CodegenConfig = {
  schema: '../../schema.graphql',
  documents: ['src/**/*.ts', '!src/gql/**'],
  ignoreNoDocuments: true,
  emitLegacyCommonJSImports: false,
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false, persistedDocuments: { mode: 'replaceDocumentWithHash' } },
      config: { useTypeImports: true, enumsAsTypes: true, scalars: { DateTime: 'string', JSON: 'unknown' } },
    },
  },
};
export default config;
