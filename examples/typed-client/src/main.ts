import { gatewayClient } from './client.js';
import { CreateQueue, CreateTask, PersonCard, TaskStatus } from './operations.js';

// Usage: GATEWAY_URL=http://127.0.0.1:4000 [API_KEY=gw_…] TARGET_URL=http://127.0.0.1:8080/hook npx tsx src/main.ts
// Prints one JSON line per step.

const client = gatewayClient(process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000', process.env.API_KEY);
const target = process.env.TARGET_URL ?? 'http://127.0.0.1:8080/hook';

const { person } = await client.request(PersonCard, { oid: '1000000001' });
console.log(JSON.stringify({ person: `${person.firstName} ${person.lastName}`, employers: person.employments.map((e) => e.organization.shortName) }));

const queue = `typed-${Date.now().toString(36)}`;
const { createQueue } = await client.request(CreateQueue, { input: { name: queue, rate: 5 } });
console.log(JSON.stringify({ queue: createQueue.name, paused: createQueue.paused }));

const { createTask } = await client.request(CreateTask, { input: { queueName: queue, name: 'hello', target: { url: target } } });
console.log(JSON.stringify({ task: createTask.name, status: createTask.status }));
// Followed after its creation: the changes still to come, or at once its end status if it is already over; the loop
// ends when the server completes the subscription after that end status.
const seen: string[] = [];
for await (const { taskStatusChanged } of client.subscribe(TaskStatus, { queueName: queue, name: 'hello' })) seen.push(taskStatusChanged.status);
console.log(JSON.stringify({ statuses: seen }));
await client.close();
