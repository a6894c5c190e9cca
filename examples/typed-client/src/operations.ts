import { graphql } from './gql/index.js';

// The operations this front end runs, written once; codegen turns each into a typed document.

export const PersonCard = graphql(`
  query PersonCard($oid: String!) {
    person(oid: $oid) {
      firstName
      lastName
      employments {
        position
        organization {
          shortName
        }
      }
    }
  }
`);

export const CreateQueue = graphql(`
  mutation CreateQueue($input: CreateQueueInput!) {
    createQueue(input: $input) {
      name
      rate
      paused
    }
  }
`);

export const CreateTask = graphql(`
  mutation CreateTask($input: CreateTaskInput!) {
    createTask(input: $input) {
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
