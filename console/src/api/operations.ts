import { graphql } from '../gql';

// Every operation the console runs, typed by codegen (console/codegen.ts) from schema.graphql. Every action is a
// mutation of the gateway's own API, so the audit trail and the scope checks are the same as for any client.

export const Viewer = graphql(`
  query Viewer {
    viewer { authRequired keyName scopes systemId allowedFields }
  }
`);

// --- Home

export const Activity = graphql(`
  query Activity($minutes: Int!, $tasks: Boolean!, $jobs: Boolean!, $deliveries: Boolean!) {
    taskActivity(minutes: $minutes) @include(if: $tasks) { minute succeeded failed }
    jobActivity(minutes: $minutes) @include(if: $jobs) { minute succeeded failed }
    deliveryActivity(minutes: $minutes) @include(if: $deliveries) { minute succeeded failed }
  }
`);

// --- Queues

export const QueueFields = graphql(`
  fragment QueueFields on Queue {
    name status paused rate description updateTime
    tasksSummary { total blocked ready running succeeded failed cancelled }
  }
`);

export const Queues = graphql(`
  query Queues($filter: QueueFilter, $first: Int!, $after: String) {
    queues(filter: $filter, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { ...QueueFields }
    }
  }
`);

// Live views start from their subscription's first event (`current: true`, the state once it listens): a view that
// read beside its subscription could miss a change made between the two.
export const QueueChanged = graphql(`
  subscription QueueChanged($name: String!) {
    queueChanged(name: $name, current: true) { name status paused rate description updateTime }
  }
`);

export const SummaryChanged = graphql(`
  subscription SummaryChanged($queueName: String!) {
    tasksSummaryChanged(queueName: $queueName, current: true) { total blocked ready running succeeded failed cancelled }
  }
`);

export const QueuesChanged = graphql(`subscription QueuesChanged { queuesChanged }`);

export const PauseQueue = graphql(`mutation PauseQueue($name: String!) { pauseQueue(name: $name) { name paused } }`);
export const ResumeQueue = graphql(`mutation ResumeQueue($name: String!) { resumeQueue(name: $name) { name paused } }`);
export const OpenQueue = graphql(`mutation OpenQueue($name: String!) { openQueue(name: $name) { name status } }`);
export const CloseQueue = graphql(`mutation CloseQueue($name: String!) { closeQueue(name: $name) { name status } }`);
export const ChangeQueueRate = graphql(`mutation ChangeQueueRate($name: String!, $rate: Int!) { changeQueueRate(name: $name, rate: $rate) { name rate } }`);
export const DeleteQueue = graphql(`mutation DeleteQueue($name: String!) { deleteQueue(name: $name) { name } }`);

export const QueueSettings = graphql(`query QueueSettings($name: String!) { queue(name: $name) { name description rate maxConcurrentDispatches labels } }`);
export const CreateQueue = graphql(`mutation CreateQueue($input: CreateQueueInput!) { createQueue(input: $input) { name } }`);
export const UpdateQueue = graphql(`
  mutation UpdateQueue($name: String!, $input: UpdateQueueInput!) {
    updateQueue(name: $name, input: $input) { name description rate maxConcurrentDispatches labels updateTime }
  }
`);
export const QueueActivity = graphql(`query QueueActivity($queueName: String!) { taskActivity(minutes: 60, queueName: $queueName) { minute succeeded failed } }`);

// --- Tasks

export const QueueTasks = graphql(`
  query QueueTasks($queueName: String!, $filter: TaskFilter, $first: Int!, $after: String) {
    queue(name: $queueName) {
      ...QueueFields
      tasks(filter: $filter, first: $first, after: $after, orderBy: CREATE_TIME_DESC) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { id name status attempts maxAttempts updateTime lastError }
      }
    }
  }
`);

export const TaskDetail = graphql(`
  query TaskDetail($queueName: String!, $name: String!) {
    task(queueName: $queueName, name: $name) {
      id queueName name description status attempts maxAttempts minBackoffMs maxBackoffMs lastError
      target { url method headers body timeoutSeconds }
      result { statusCode body }
      payload dependsOn scheduleTime createTime startTime finishTime updateTime nextAttemptAt
      history { attempt startTime durationMs outcome statusCode error answer }
    }
  }
`);

export const TaskStatus = graphql(`
  subscription TaskStatus($queueName: String!, $name: String!) {
    taskStatusChanged(queueName: $queueName, name: $name, current: true, followRestarts: true) { status }
  }
`);

export const CancelTask = graphql(`mutation CancelTask($queueName: String!, $name: String!) { cancelTask(queueName: $queueName, name: $name) { name status } }`);
export const RestartTask = graphql(`mutation RestartTask($queueName: String!, $name: String!) { restartTask(queueName: $queueName, name: $name) { name status } }`);
export const RunTaskNow = graphql(`mutation RunTaskNow($queueName: String!, $name: String!) { runTaskNow(queueName: $queueName, name: $name) { name status } }`);

// --- Failures: tasks of every queue, most recently ended first, and the bulk actions on them

export const FoundTasks = graphql(`
  query FoundTasks($filter: TaskFilter, $first: Int!, $after: String) {
    tasks(filter: $filter, first: $first, after: $after, orderBy: FINISH_TIME_DESC) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { id queueName name status attempts maxAttempts lastError finishTime updateTime }
    }
  }
`);

export const BulkFields = graphql(`fragment BulkFields on BulkTaskResult { action matched changed more }`);
export const RetryTasks = graphql(`mutation RetryTasks($select: TaskSelection!) { retryTasks(select: $select) { ...BulkFields } }`);
export const CancelTasks = graphql(`mutation CancelTasks($select: TaskSelection!) { cancelTasks(select: $select) { ...BulkFields } }`);
export const PurgeTasks = graphql(`mutation PurgeTasks($select: TaskSelection!) { purgeTasks(select: $select) { ...BulkFields } }`);

// --- Jobs

export const Jobs = graphql(`
  query Jobs($filter: JobFilter, $first: Int!, $after: String) {
    jobs(filter: $filter, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes {
        name schedule timeZone status nextRunTime lastRunTime
        target { kind http { url } task { queue } }
        recentInstances(first: 5) { id status trigger scheduledTime }
      }
    }
  }
`);

export const JobDetail = graphql(`
  query JobDetail($name: String!, $first: Int!, $after: String) {
    job(name: $name) {
      name description schedule timeZone status nextRunTime lastRunTime timeoutSeconds misfirePolicy
      target { kind http { url httpMethod } task { queue } }
      retryConfig { retryCount }
    }
    jobInstances(filter: { jobName: $name }, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { ...InstanceFields }
    }
  }
`);

export const InstanceFields = graphql(`
  fragment InstanceFields on JobInstance { id status trigger attempts scheduledTime startTime finishTime error result misfire }
`);

export const InstanceChanged = graphql(`
  subscription InstanceChanged($jobName: String!) {
    jobInstanceChanged(jobName: $jobName) { ...InstanceFields }
  }
`);

export const CreateJob = graphql(`mutation CreateJob($input: CreateJobInput!) { createJob(input: $input) { name } }`);
export const UpdateJob = graphql(`mutation UpdateJob($name: String!, $input: UpdateJobInput!) { updateJob(name: $name, input: $input) { name } }`);
export const RunJob = graphql(`mutation RunJob($name: String!) { runJob(name: $name) { ...InstanceFields } }`);
export const PauseJob = graphql(`mutation PauseJob($name: String!) { pauseJob(name: $name) { name status nextRunTime } }`);
export const ResumeJob = graphql(`mutation ResumeJob($name: String!) { resumeJob(name: $name) { name status nextRunTime } }`);

// --- Notifications

export const UnitFields = graphql(`
  fragment UnitFields on Notification {
    id incomingId systemId channel type recipient status attempts maxAttempts lastError createTime updateTime deliveredTime
  }
`);

export const Units = graphql(`
  query Units($filter: NotificationFilter, $first: Int!, $after: String) {
    notifications(filter: $filter, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { ...UnitFields }
    }
  }
`);

export const ResendNotification = graphql(`mutation ResendNotification($id: ID!) { resendNotification(id: $id) { ...UnitFields } }`);

export const RequestChanged = graphql(`
  subscription RequestChanged($incomingId: String!) {
    notificationStatusChanged(incomingId: $incomingId) { ...UnitFields }
  }
`);

export const Stubs = graphql(`
  query Stubs($type: String!, $status: NotificationStatus, $pageNumber: Int!, $pageSize: Int!) {
    stubNotifications(type: $type, status: $status, pageNumber: $pageNumber, pageSize: $pageSize) {
      totalElements totalPages currentPage
      content { id systemId recipient status createTime updateTime }
    }
  }
`);
