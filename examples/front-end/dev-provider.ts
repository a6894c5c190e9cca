import { GATEWAY_RESOURCE, signingKey, startTestProvider } from '../../test/helpers/oidc-provider.js';
import { localOrigins, localPorts } from './ports.js';

// An OpenID provider to try the app with on this machine: the one the tests run (oidc-provider, a certified
// implementation, with sign-in and consent pages of its own), on PROVIDER_PORT (ports.ts), knowing one public client,
// `front-end`, whose sign-ins come back to the app on APP_PORT, and one person. Keys, sessions and grants live in
// memory: a restart signs everyone out. Run: npx tsx dev-provider.ts

const provider = await startTestProvider([{ id: 'front-end', redirectUris: [`${localOrigins().app}/`] }], [await signingKey('dev-1')], {
  port: localPorts().provider,
  accounts: [{ login: 'ivan', password: 'petrov', name: 'Ivan Petrov' }],
});
console.log(`OpenID provider at ${provider.issuer}, issuing access tokens for ${GATEWAY_RESOURCE}; sign in as ivan, password petrov`);
