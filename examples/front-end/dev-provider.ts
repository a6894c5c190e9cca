import { GATEWAY_RESOURCE, signingKey, startTestProvider } from '../../test/helpers/oidc-provider.js';

// An OpenID provider to try the app with on this machine: the one the tests run (oidc-provider, a certified
// implementation, with sign-in and consent pages of its own), at http://127.0.0.1:4010, knowing one public client,
// `front-end`, whose sign-ins come back to the app at http://127.0.0.1:4173/, and one person. Keys, sessions and
// grants live in memory: a restart signs everyone out. Run: npx tsx dev-provider.ts

const APP = 'http://127.0.0.1:4173/';
const provider = await startTestProvider([{ id: 'front-end', redirectUris: [APP] }], [await signingKey('dev-1')], {
  port: 4010,
  accounts: [{ login: 'ivan', password: 'petrov', name: 'Ivan Petrov' }],
});
console.log(`OpenID provider at ${provider.issuer}, issuing access tokens for ${GATEWAY_RESOURCE}; sign in as ivan, password petrov`);
