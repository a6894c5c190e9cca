import { loadConfig } from './config.js';
import { connectGateway, type Gateway } from './gateway.js';
import { CreateTask, Queues, TaskStatus } from './operations.js';
import { finishSignIn, startSignIn } from './sign-in.js';

// The page: sign in, list the queues, create a task and follow its status live. The access token stays in this
// module's memory only, never in storage a script could read later: a reload signs in again (one redirect, with no
// password while the provider's own session lasts).

const element = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

function show(problem: unknown): void {
  element('problem').textContent = problem instanceof Error ? problem.message : String(problem);
}

function item(text: string): HTMLLIElement {
  const li = document.createElement('li');
  li.textContent = text;
  return li;
}

async function listQueues(gateway: Gateway): Promise<void> {
  const { viewer, queues } = await gateway.request(Queues, {});
  element('scopes').textContent = viewer.scopes.join(' ');
  element('queues').replaceChildren(...queues.nodes.map((q) => item(q.paused ? `${q.name} (paused)` : q.name)));
  element('queue').replaceChildren(...queues.nodes.map((q) => new Option(q.name)));
}

/** Creates the task, then shows each status it takes until the gateway completes the subscription (an end status). */
async function createAndFollow(gateway: Gateway, form: HTMLFormElement): Promise<void> {
  const fields = new FormData(form);
  const queueName = String(fields.get('queue'));
  const name = String(fields.get('name'));
  const { createTask } = await gateway.request(CreateTask, { input: { queueName, name, target: { url: String(fields.get('url')) } } });
  element('task').textContent = `${createTask.queueName}/${createTask.name}`;
  const statuses = element('statuses');
  statuses.replaceChildren(item(createTask.status));
  for await (const { taskStatusChanged } of gateway.subscribe(TaskStatus, { queueName, name })) statuses.append(item(taskStatusChanged.status));
}

async function start(): Promise<void> {
  const config = await loadConfig();
  element('sign-in').addEventListener('click', () => startSignIn(config).catch(show));
  const session = await finishSignIn(config);
  if (!session) {
    element('signed-out').hidden = false;
    return;
  }
  const gateway = connectGateway(config.gateway, () => session.accessToken);
  element('who').textContent = session.name;
  element('signed-in').hidden = false;
  const form = element<HTMLFormElement>('new-task');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    show('');
    createAndFollow(gateway, form).catch(show);
  });
  await listQueues(gateway);
}

start().catch(show);
