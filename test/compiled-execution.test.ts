import { describe, expect, it } from 'vitest';
import { parse } from 'graphql';
import { buildSchema } from '../src/graphql/schema.js';
import { compiledOperation } from '../src/graphql/plugins/use-compiled-execution.js';

describe('compiled execution', () => {
  const schema = buildSchema();

  it('compiles documents without Prisma relations; documents selecting one stay on graphql-js (they would load each relation on its own)', () => {
    expect(compiledOperation(schema, parse('query($n: String!) { queue(name: $n) { name labels createTime } }'))).not.toBeNull();
    expect(compiledOperation(schema, parse('{ queues(first: 50) { totalCount nodes { name } } }'))).not.toBeNull();
    expect(compiledOperation(schema, parse('{ person(oid: "1") { oid firstName } }'))).not.toBeNull();
    expect(compiledOperation(schema, parse('{ person(oid: "1") { oid organizations { chief organization { oid } } } }'))).toBeNull();
    expect(compiledOperation(schema, parse('fragment P on Person { employments(pageSize: 2) { role } } { person(oid: "1") { ...P } }'))).toBeNull();
  });
});
