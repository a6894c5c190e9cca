import type { ResultOf, VariablesOf } from '@graphql-typed-document-node/core';
import { PersonCard, TaskStatus } from './operations.js';

// Mistakes the compiler must catch: each line below fails to type-check, and `tsc` fails if one of them does not.

declare const card: ResultOf<typeof PersonCard>;
// @ts-expect-error birthDate is not selected by PersonCard
void card.person.birthDate;
// @ts-expect-error oid is a String
export const badVariables: VariablesOf<typeof PersonCard> = { oid: 1000000001 };
declare const status: ResultOf<typeof TaskStatus>;
// @ts-expect-error status is an enum of the schema, not any string
export const notAStatus: typeof status.taskStatusChanged.status = 'DONE';
