// Rows the benchmarks generate in their fresh databases, each in one INSERT ... SELECT generate_series: every row
// differs (names, SNILS, INN, eTag) without a round trip per row.

/** $1 = first oid - 1 (persons get oids $1 + 1 .. $1 + $2), $2 = how many. */
export const GENERATE_PERSONS = `
  INSERT INTO "Person" ("oid", "firstName", "lastName", "middleName", "birthDate", "birthPlace", "gender", "trusted",
    "citizenship", "snils", "inn", "updatedOn", "status", "rIdDoc", "eTag", "stateFacts")
  SELECT ($1::bigint + i)::text, 'First' || i, 'Last' || i, 'Middle' || (i % 1000),
    lpad(((i % 28) + 1)::text, 2, '0') || '.' || lpad(((i % 12) + 1)::text, 2, '0') || '.' || (1950 + i % 50),
    'City ' || (i % 500), CASE WHEN i % 2 = 0 THEN 'M' ELSE 'F' END, i % 3 <> 0, 'RUS',
    lpad((i / 100000 % 1000)::text, 3, '0') || '-' || lpad((i / 100 % 1000)::text, 3, '0') || '-' || lpad((i % 1000)::text, 3, '0') || ' ' || lpad((i % 100)::text, 2, '0'),
    lpad(i::text, 12, '0'), now(), 'REGISTERED', 1000000 + i, md5(i::text), ARRAY['EntityRoot']
  FROM generate_series(1, $2::int) AS i`;

/** $1 = first oid - 1, $2 = how many organizations. */
export const GENERATE_ORGANIZATIONS = `
  INSERT INTO "Organization" ("oid", "shortName", "fullName", "type", "ogrn", "inn", "kpp", "leg", "active")
  SELECT ($1::bigint + i)::text, 'Org ' || i, 'Organization number ' || i || ' of the benchmark', 'LEGAL',
    lpad(i::text, 13, '1'), lpad(i::text, 10, '7'), lpad(i::text, 9, '0'), '12300', i % 10 <> 0
  FROM generate_series(1, $2::int) AS i`;

/** Each person ($1 = first person oid - 1, $2 persons) works in $5 organizations of the $4 starting after $3. */
export const GENERATE_EMPLOYMENTS = `
  INSERT INTO "PersonOrganization" ("personOid", "organizationOid", "position", "chief", "admin", "active")
  SELECT ($1::bigint + p)::text, ($3::bigint + 1 + (p + k) % $4::int)::text, 'Position ' || k, k = 0, p % 7 = 0, true
  FROM generate_series(1, $2::int) AS p, generate_series(0, $5::int - 1) AS k`;

/** $1 queues named queue-00001 ... (queueName); run again with a larger $1, it adds the ones missing. */
export const GENERATE_QUEUES = `
  INSERT INTO "Queue" ("name", "description", "rate", "labels", "updateTime")
  SELECT 'queue-' || lpad(i::text, 5, '0'), 'Queue ' || i, 1 + i % 10, ARRAY['bench', 'group-' || (i % 10)], now()
  FROM generate_series(1, $1::int) AS i ON CONFLICT ("name") DO NOTHING`;

/** The name GENERATE_QUEUES gives its `n`th queue (from 1). */
export const queueName = (n: number) => `queue-${String(n).padStart(5, '0')}`;

/** One of the first `count` queues GENERATE_QUEUES made, at random. */
export const randomQueueName = (count: number) => queueName(1 + Math.floor(Math.random() * count));

/** Every field of a queue, as the benches select it. */
export const QUEUE_FIELDS = 'name description status paused rate labels createTime updateTime';
