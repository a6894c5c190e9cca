import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { compilePath } from '../../src/api/legacy/http-route.js';

// Checks real answers against the OpenAPI document they were served under: the status must be documented for the
// operation, the body must match its schema and the documented headers must be there. Objects are checked exactly
// (no key the document does not name), which the published document does not demand of clients.

type Json = Record<string, any>;

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const COMPONENTS_ID = 'https://gateway.test/components';

/**
 * A copy of `schema` whose object schemas admit no undeclared key. Members of an allOf (and what their properties
 * hold) only add constraints to a schema that is complete elsewhere, so they are left open.
 */
export function exact(schema: unknown, partial = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => exact(s));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) out[key] = `${COMPONENTS_ID}#/$defs/${value.slice(21)}`;
    else if (key === 'allOf') out[key] = (value as unknown[]).map((member) => exact(member, true));
    else if (key === 'properties' && partial) out[key] = Object.fromEntries(Object.entries(value as Json).map(([name, property]) => [name, exact(property, true)]));
    else out[key] = exact(value);
  }
  const types = Array.isArray(out.type) ? out.type : [out.type];
  if (!partial && types.includes('object') && out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

export class AnswerChecker {
  readonly covered = new Set<string>();
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly operations: { template: string; method: string; match: (p: string) => Record<string, string> | null; op: Json }[] = [];

  constructor(private readonly doc: Json) {
    this.ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: exact(doc.components.schemas) as Json });
    for (const [template, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) this.operations.push({ template, method: method.toUpperCase(), match: compilePath(template), op: op as Json });
    }
  }

  /** Every documented `METHOD template status`. */
  documented(): string[] {
    return this.operations.flatMap(({ template, method, op }) => Object.keys(op.responses).map((status) => `${method} ${template} ${status}`));
  }

  operation(method: string, pathname: string): { template: string; op: Json } {
    const found = this.operations.find((o) => o.method === method && o.match(pathname));
    if (!found) throw new Error(`${method} ${pathname} is not documented`);
    return found;
  }

  /** Throws naming what is wrong; records the operation and status as covered. */
  check(method: string, pathname: string, answer: Answer): void {
    const { template, op } = this.operation(method, pathname);
    const where = `${method} ${template} ${answer.status}`;
    const response = op.responses[String(answer.status)] as Json | undefined;
    if (!response) throw new Error(`${where} is not documented (documented: ${Object.keys(op.responses).join(', ')}); body ${answer.text.slice(0, 300)}`);
    for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
      const resolved = (header.$ref ? this.doc.components.headers[header.$ref.split('/').pop()] : header) as Json;
      const value = answer.headers.get(name);
      if (value === null) throw new Error(`${where}: header ${name} is missing`);
      const typed = resolved.schema?.type === 'integer' ? Number(value) : value;
      const validate = this.validator(`${where} header ${name}`, resolved.schema ?? {});
      if (!validate(typed)) throw new Error(`${where}: header ${name}: ${value}: ${this.ajv.errorsText(validate.errors)}`);
    }
    const content = response.content?.['application/json'] as Json | undefined;
    if (!content) {
      if (answer.text !== '') throw new Error(`${where}: documented without a body, answered ${answer.text.slice(0, 200)}`);
    } else {
      if (!/^application\/json/.test(answer.headers.get('content-type') ?? '')) throw new Error(`${where}: content-type ${answer.headers.get('content-type')}`);
      const validate = this.validator(where, content.schema);
      if (!validate(answer.body)) {
        throw new Error(`${where}: the body does not match the document: ${this.ajv.errorsText(validate.errors, { separator: '\n  ' })}\n  body: ${answer.text.slice(0, 1500)}`);
      }
    }
    this.covered.add(where);
  }

  private validator(key: string, schema: Json): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(exact(schema) as Json);
      this.validators.set(key, validate);
    }
    return validate;
  }
}
