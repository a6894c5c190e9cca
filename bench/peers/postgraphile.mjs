// Peer of `npm run bench:graphql`: PostGraphile 5 (the pinned devDependency) with its recommended Amber preset over
// the gateway's own database, as its documentation starts it: grafserv on node:http, a pg pool of 10 (the gateway's
// DATABASE_POOL_MAX default), no explain, no GraphiQL. Prints {"url": ...} on stdout once listening.
import { createServer } from 'node:http';
import { postgraphile } from 'postgraphile';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';

const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [makePgService({ connectionString: process.env.DATABASE_URL, schemas: ['public'], poolConfig: { max: 10 } })],
  grafserv: { graphqlPath: '/graphql', graphiql: false, watch: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.on('error', (error) => {
  console.error(error);
  process.exit(1);
});
await serv.addTo(server);
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })));
process.on('SIGTERM', () => {
  server.close();
  void pgl.release().then(() => process.exit(0));
});
