import { getNamedType, getNullableType, isLeafType, isListType, type GraphQLField } from 'graphql';
import { ATTEMPT_HISTORY } from '../db/task-attempts.js';
import { BULK_TASK_LIMIT } from '../tasks/task-rules.js';

// How many items each list field of the schema may return, for the query cost (operation.ts). The estimate must
// count what will execute, so every list is counted by what bounds it in the resolvers:
// - a paging argument of the field itself (Person.employments(pageSize)), or of the field whose result holds the
//   list (Query.queues(first) -> QueueConnection.nodes/edges, stubNotifications(pageSize) -> content);
// - otherwise its bound in the data model (LIST_BOUNDS), or, when nothing there bounds it (UNBOUNDED_LISTS; a list
//   named nowhere counts so too), GRAPHQL_UNPAGED_LIST_SIZE items.
// test/query-cost.test.ts checks every list field of the schema is one of these.

/** The schema's paging arguments: every resolver reads them through pageWindowSchema or a rule of the same bounds. */
export const PAGING_ARGUMENTS: ReadonlySet<string> = new Set(['first', 'pageSize']);

/** Unpaged lists with a bound in the data model or the input rules: `Type.field` -> most items. */
export const LIST_BOUNDS: ReadonlyMap<string, number> = new Map([
  // One entry per CheckName (SIGNATURE, MESSAGE_DIGEST, CERTIFICATE_VALIDITY, CHAIN): src/signatures/verify.ts.
  ['CmsSigner.checks', 4],
  // createFileGroup is the only way to make a group, and its `files` rule allows at most 20 (fileUploads); a
  // notification's attachments are the files of its group.
  ['FileGroup.files', 20],
  ['Query.stubNotificationAttachments', 20],
  // One row per system and channel name (@@id([systemId, channel])), and there are 8 channel names.
  ['Query.systemChannels', 8],
  // One row per system and channel name or "*" (@@id([systemId, channel])): 8 channel names and "*".
  ['Query.retrySchedules', 9],
  // The delivery units of one notification request (unitsOf): at most 500 each of to, cc and bcc for a separate
  // e-mail per address; fewer for the other channels (1,000 phone numbers; 1,000 device tokens, a topic, a condition).
  ['SendNotificationResult.notificationResponses', 1500],
  ['Subscription.notificationStatusChanged', 1500],
  // One item per minute of the window asked for, at most a day (MAX_ACTIVITY_MINUTES in src/schema/common.ts).
  ['Query.taskActivity', 1440],
  ['Query.jobActivity', 1440],
  ['Query.deliveryActivity', 1440],
  // A task keeps its last ATTEMPT_HISTORY attempts: the settle statement trims the older ones.
  ['Task.history', ATTEMPT_HISTORY],
  // A bulk action changes at most BULK_TASK_LIMIT tasks per call (taskSelection).
  ['BulkTaskResult.tasks', BULK_TASK_LIMIT],
]);

/**
 * Lists nothing in the data model bounds, counted as GRAPHQL_UNPAGED_LIST_SIZE items (an assumption, documented in
 * docs/security.md): a person's organizations and groups, an organization's members and groups, a profile's trust
 * anchors, the signers of a CMS (as many as 64 KiB of base64 holds), the certificates of an audit record. The estimate
 * is below what runs only for one of these holding more items than that. Counting them as a full page instead
 * (MAX_PAGE_SIZE) would refuse natural reads such as a person's organizations with each organization's groups
 * (500 x 500) at the default GRAPHQL_MAX_COST, and they cannot be paged smaller.
 */
export const UNBOUNDED_LISTS: ReadonlySet<string> = new Set([
  'Person.organizations',
  'Person.groups',
  'Organization.members',
  'Organization.groups',
  'Query.trustedRoots',
  'CmsVerification.signers',
  'VerificationAudit.certificates',
]);

/** The paging argument a field takes, if any. */
export function pagingArgument(field: GraphQLField<unknown, unknown>): string | undefined {
  return field.args.find((a) => PAGING_ARGUMENTS.has(a.name))?.name;
}

/** Whether a field returns a list of objects (lists of scalars cost 1, like any leaf). */
export function isObjectList(field: GraphQLField<unknown, unknown>): boolean {
  return isListType(getNullableType(field.type)) && !isLeafType(getNamedType(field.type));
}

/**
 * Items a paging argument's value makes the resolver return at most: null or absent take DEFAULT_PAGE_SIZE; a value
 * outside 1..MAX_PAGE_SIZE (or not an integer) is refused by the resolver (or by variable coercion) before any row
 * is read, so nothing below it executes.
 */
export function pageItems(value: unknown, limits: { defaultPageSize: number; maxPageSize: number }): number {
  if (value === undefined || value === null) return limits.defaultPageSize;
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= limits.maxPageSize ? value : 0;
}
