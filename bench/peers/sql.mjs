// The statements the hand-written peers of `npm run bench:graphql` run: what a developer writing the server by hand
// against the gateway's tables would write (one statement per read, a join for the nested read, INSERT ... RETURNING).
export const QUEUE_COLUMNS = `name, description, status, paused, rate, labels, "createTime", "updateTime"`;
export const GET_QUEUE = `SELECT ${QUEUE_COLUMNS} FROM "Queue" WHERE name = $1`;
// The total as a window count, the idiom a hand-written page often uses: PostgreSQL reads every row in name order and
// keeps them all for the window (spilling to a temporary file past work_mem), ~26 ms a page over 70,000 queues
// against ~6 ms for a separate count(*). The bare and yoga peers' low figures on the big page are this statement's.
export const LIST_QUEUES = `SELECT ${QUEUE_COLUMNS}, count(*) OVER () AS "totalCount" FROM "Queue" ORDER BY name LIMIT $1`;
export const CREATE_QUEUE = `INSERT INTO "Queue" (name, rate, labels) VALUES ($1, $2, $3) RETURNING ${QUEUE_COLUMNS}`;
export const GET_PERSON = `SELECT oid, "firstName", "lastName" FROM "Person" WHERE oid = $1`;
export const PERSON_ORGANIZATIONS = `
  SELECT m.chief, m.admin, m.active, o.oid, o."shortName", o."fullName", o.type, o.ogrn, o.inn, o.kpp, o.leg, o.active AS "organizationActive"
  FROM "PersonOrganization" m JOIN "Organization" o ON o.oid = m."organizationOid"
  WHERE m."personOid" = $1 ORDER BY o.oid`;

/** A Queue row as JSON answers carry it (timestamps as ISO strings). */
export const queueJson = (row) => ({
  name: row.name, description: row.description, status: row.status, paused: row.paused, rate: row.rate, labels: row.labels,
  createTime: row.createTime.toISOString(), updateTime: row.updateTime.toISOString(),
});

export const employmentJson = (row) => ({
  chief: row.chief, admin: row.admin, active: row.active,
  organization: { oid: row.oid, shortName: row.shortName, fullName: row.fullName, type: row.type, ogrn: row.ogrn, inn: row.inn, kpp: row.kpp, leg: row.leg, active: row.organizationActive },
});
