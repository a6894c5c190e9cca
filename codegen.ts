import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed documents for every operation the project owns: the legacy layer's and the tests'.
const config: CodegenConfig = {
  emitLegacyCommonJSImports: false,
  schema: 'schema.graphql',
  documents: ['src/api/legacy/operations/*.graphql', 'test/operations/*.graphql'],
  ignoreNoDocuments: true,
  generates: {
    'src/generated/graphql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { useTypeImports: true, enumsAsTypes: true, scalars: { DateTime: 'string', JSON: 'unknown' } },
    },
  },
};
export default config;
