import type { CodegenConfig } from '@graphql-codegen/cli';
import { join } from 'node:path';

// The console's typed operations (docs/typed-client.md): the gateway's contract and the operations written in
// src/, typed by the client preset into src/gql/ (generated, git-ignored). `persistedDocuments` also writes
// src/gql/persisted-documents.json, the console's manifest of trusted documents (scripts/build-console.mjs puts it
// in dist/, and the gateway trusts it whenever it serves the console); with `replaceDocumentWithHash` each generated
// document is only its id, which the console sends instead of the text, so the bundle needs no GraphQL parser or
// printer. Paths are this folder's, wherever codegen runs from (scripts/generate.mjs runs it from the repository's
// root).
const here = import.meta.dirname;
const config: CodegenConfig = {
  schema: join(here, '../schema.graphql'),
  documents: [join(here, 'src/**/*.ts'), join(here, 'src/**/*.tsx'), `!${join(here, 'src/gql/**')}`],
  ignoreNoDocuments: true,
  emitLegacyCommonJSImports: false,
  generates: {
    [join(here, 'src/gql/')]: {
      preset: 'client',
      presetConfig: { fragmentMasking: false, persistedDocuments: { mode: 'replaceDocumentWithHash' } },
      config: { useTypeImports: true, enumsAsTypes: true, documentMode: 'string', scalars: { DateTime: 'string', JSON: 'unknown' } },
    },
  },
};
export default config;
