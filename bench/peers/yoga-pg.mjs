// Peer of `npm run bench:graphql`: graphql-yoga with a schema written by hand and one resolver per field running
// raw pg (pool of 10), the smallest GraphQL server over the same tables. Prints {"url": ...} once listening.
import { createServer } from 'node:http';
import { createSchema, createYoga } from 'graphql-yoga';
import pg from 'pg';
import { CREATE_QUEUE, GET_PERSON, GET_QUEUE, LIST_QUEUES, PERSON_ORGANIZATIONS, employmentJson, queueJson } from './sql.mjs';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const schema = createSchema({
  typeDefs: /* GraphQL */ `
    enum QueueStatus { OPEN CLOSE }
    type Queue { name: String! description: String! status: QueueStatus! paused: Boolean! rate: Int! labels: [String!]! createTime: String! updateTime: String! }
    type QueuePage { totalCount: Int! nodes: [Queue!]! }
    type Organization { oid: String! shortName: String! fullName: String! type: String! ogrn: String inn: String kpp: String leg: String active: Boolean! }
    type Employment { chief: Boolean! admin: Boolean! active: Boolean! organization: Organization! }
    type Person { oid: String! firstName: String! lastName: String! organizations: [Employment!]! }
    input CreateQueueInput { name: String! rate: Int labels: [String!] }
    type Query { queue(name: String!): Queue queues(first: Int!): QueuePage! person(oid: String!): Person }
    type Mutation { createQueue(input: CreateQueueInput!): Queue! }
  `,
  resolvers: {
    Query: {
      queue: async (_, { name }) => {
        const { rows } = await pool.query(GET_QUEUE, [name]);
        return rows[0] ? queueJson(rows[0]) : null;
      },
      queues: async (_, { first }) => {
        const { rows } = await pool.query(LIST_QUEUES, [first]);
        return { totalCount: Number(rows[0]?.totalCount ?? 0), nodes: rows.map(queueJson) };
      },
      person: async (_, { oid }) => (await pool.query(GET_PERSON, [oid])).rows[0] ?? null,
    },
    Person: {
      organizations: async (person) => (await pool.query(PERSON_ORGANIZATIONS, [person.oid])).rows.map(employmentJson),
    },
    Mutation: {
      createQueue: async (_, { input }) => queueJson((await pool.query(CREATE_QUEUE, [input.name, input.rate ?? 1, input.labels ?? []])).rows[0]),
    },
  },
});

const server = createServer(createYoga({ schema, graphiql: false, landingPage: false, logging: 'warn' }));
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })));
process.on('SIGTERM', () => {
  server.close();
  void pool.end().then(() => process.exit(0));
});
