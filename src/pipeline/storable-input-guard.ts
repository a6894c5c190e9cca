import { visit, type DocumentNode } from 'graphql';
import type { FieldIssue } from '../errors.js';
import { NUL_MESSAGE, storableInputIssues } from '../validation.js';
import { refusal } from './operation.js';
import type { OperationGuard } from './guards.js';

// Input the database would refuse is a client's mistake, answered before anything runs, by the one storable-input
// rule the legacy door applies too (src/validation.ts: storableInputIssues): in the variables a string holding U+0000
// or a lone surrogate, a value nesting deeper than MAX_JSON_DEPTH; in the document a string literal holding U+0000
// (graphql-js itself refuses lone surrogates in literals, and the parser bounds their nesting). Over HTTP 400
// BAD_USER_INPUT naming each field; over graphql-ws the same error.

function literalIssues(document: DocumentNode): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const argumentNames: string[] = [];
  visit(document, {
    Argument: { enter: (node) => void argumentNames.push(node.name.value), leave: () => void argumentNames.pop() },
    StringValue(node) {
      if (node.value.includes('\u0000')) issues.push({ field: argumentNames.at(-1) ?? 'query', message: NUL_MESSAGE });
    },
  });
  return issues;
}

export function storableInputGuard(): OperationGuard {
  return (args) => {
    // A document without a source is one of the legacy layer's own: its variables were checked at the legacy edge,
    // which names the fields as the caller sent them (params.*, body.*), and it holds no literal a client wrote.
    const body = args.document.loc?.source.body;
    if (body === undefined) return null;
    const issues = [...storableInputIssues(args.variableValues ?? {}, ''), ...(hasNulLiteral(body) ? literalIssues(args.document) : [])];
    if (issues.length === 0) return null;
    const withHttpStatus = (args.contextValue as { httpStatus?: boolean }).httpStatus === true;
    return {
      errors: [refusal(`Invalid input: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`, 'BAD_USER_INPUT', withHttpStatus, { fields: issues })],
    };
  };
}

/** A cheap pre-check: only documents whose source holds a NUL (raw or escaped) are walked. */
function hasNulLiteral(body: string): boolean {
  return body.includes('\u0000') || /\\u(0000|\{0+\})/i.test(body);
}
