import type { CodegenConfig } from '@graphql-codegen/cli';

// The console's typed operations (docs/typed-client.md): the gateway's contract and the operations written in
// src/, typed by the client preset into src/gql/ (generated, git-ignored). `documentMode: 'string'` makes each
// document its query text with types attached, so the browser bundle needs no GraphQL parser or printer.
const config: CodegenConfig = {
  schema: '../schema.graphql',
  documents: ['src/**/*.ts', 'src/**/*.tsx', '!src/gql/**'],
  ignoreNoDocuments: true,
  emitLegacyCommonJSImports: false,
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { useTypeImports: true, enumsAsTypes: true, documentMode: 'string', scalars: { DateTime: 'string', JSON: 'unknown' } },
    },
  },
};
export default config;
