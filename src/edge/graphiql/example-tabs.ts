// The tabs GraphiQL opens with on a first visit: one example per area, in an order that works as a walk-through on a
// fresh embedded database (create a queue, a task in it, watch the task, cancel it, ...). Every document is
// validated against the schema, with its variables, by test/graphiql.test.ts.

/** One GraphiQL tab: a document and its variables as JSON text. */
export interface ExampleTab {
  readonly query: string;
  readonly variables?: string;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

export const EXAMPLE_TABS: readonly ExampleTab[] = [
  {
    // No variables here: GraphiQL 5 opens its first tab with an empty Variables editor (it takes the starting
    // variables from its storage, not from the tab), so the first example must not need any.
    query: `# Identity: a person (demo data of the embedded database).
# With AUTH=on, put your API key in the Headers tab below,
# run (Ctrl-Enter), then re-fetch the schema (the circular
# arrow, bottom left). Personal fields follow X-IdpScopes:
# add "X-IdpScopes": "fullname" to the headers, run again.
query Person {
  person(oid: "1000000001") {
    oid
    lastName
    firstName
    middleName
    birthDate
    snils
    trusted
  }
}
`,
  },
  {
    query: `# Queues: tasks run in a queue, at most \`rate\` at a time.
mutation CreateQueue {
  createQueue(input: {name: "demo", description: "Made in GraphiQL", rate: 5}) {
    name
    status
    rate
    createTime
  }
}

query Queues {
  queues(first: 10) {
    totalCount
    nodes {
      name
      status
      paused
      rate
    }
  }
}
`,
  },
  {
    query: `# Tasks: HTTP calls the gateway makes later. This one
# waits for its schedule time, so it stays BLOCKED until
# you cancel it: run the TaskStatus subscription (next
# tab) first to watch that.
mutation CreateTask($input: CreateTaskInput!) {
  createTask(input: $input) {
    name
    queueName
    status
    scheduleTime
  }
}

mutation CancelTask {
  cancelTask(queueName: "demo", name: "hello") {
    name
    status
  }
}
`,
    variables: json({
      input: {
        queueName: 'demo',
        name: 'hello',
        target: { url: 'https://service.example/hooks/hello', method: 'POST' },
        payload: { greeting: 'hello' },
        scheduleTime: '2099-01-01T00:00:00Z',
      },
    }),
  },
  {
    query: `# Task status, live over graphql-ws: every change of
# the task, made by any gateway process.
subscription TaskStatus {
  taskStatusChanged(queueName: "demo", name: "hello") {
    name
    queueName
    status
    task {
      attempts
      lastError
      updateTime
    }
  }
}
`,
  },
  {
    query: `# Scheduler: cron jobs that call a URL or create tasks.
query Jobs {
  jobs(first: 10) {
    totalCount
    nodes {
      name
      schedule
      timeZone
      status
      nextRunTime
      lastRunTime
    }
  }
}
`,
  },
  {
    query: `# Signatures: the trust anchors CMS signatures are checked
# against, and the latest checks.
query Signatures {
  trustedRoots(profile: DEFAULT) {
    subject
    fingerprint
    notAfter
    source
  }
  verificationAudits(first: 5) {
    totalCount
    nodes {
      id
      valid
      status
      message
      createdAt
    }
  }
}
`,
  },
  {
    query: `# Notifications: accepted at once, delivered by the
# delivery worker. GENERAL is an in-app notice, read back
# through the stubs (next tab).
mutation SendNotification($request: JSON!) {
  sendNotification(systemId: "demo-system", channel: GENERAL, request: $request) {
    incomingId
    notificationResponses {
      id
      recipient
      status
    }
  }
}
`,
    variables: json({ request: { type: 'greeting', title: 'Hello', content: 'Sent from GraphiQL' } }),
  },
  {
    query: `# Stubs: the stored notifications of a type (a channel
# name or a GENERAL type), a page at a time.
query StubNotifications {
  stubNotifications(type: "greeting", systemId: "demo-system", pageSize: 10) {
    totalElements
    content {
      id
      status
      recipient
      payload
      createTime
    }
  }
}
`,
  },
];
