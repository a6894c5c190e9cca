import { graphql } from './gql/index.js';

// Every operation this app sends, written once. codegen types each one and lists it in the manifest of trusted
// documents (src/gql/persisted-documents.json) that the gateway is deployed with.

export const Queues = graphql(`
  query Queues {
    viewer {
      scopes
    }
    queues(first: 20) {
      nodes {
        name
        paused
      }
    }
  }
`);

export const CreateTask = graphql(`
  mutation CreateTask($input: CreateTaskInput!) {
    createTask(input: $input) {
      queueName
      name
      status
    }
  }
`);

export const TaskStatus = graphql(`
  subscription TaskStatus($queueName: String!, $name: String!) {
    taskStatusChanged(queueName: $queueName, name: $name) {
      status
    }
  }
`);
