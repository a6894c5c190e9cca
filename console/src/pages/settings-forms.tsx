import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { useMutation, useQuery } from '../api/hooks';
import { CreateJob, CreateQueue, QueueSettings, UpdateJob, UpdateQueue } from '../api/operations';
import type { HttpMethod, JobTargetInput } from '../gql/graphql';
import { Alert } from '../parts/alert';
import { href, navigate } from '../route';

// Creating and editing a queue's settings and a cron job. Each form sends what is typed; the gateway's rules (a
// queue name, a rate within QUEUE_MAX_RATE, a cron expression, a time zone, a target URL the outbound policy allows)
// judge it, and a refusal is shown in the gateway's words with the form left as typed.

const HTTP_METHODS: HttpMethod[] = ['POST', 'GET', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** A folded form: its summary opens it, submitting runs `save` and folds it again once the gateway accepted it. */
function Folded({ summary, children, onSubmit, busy, error, submit }: { summary: string; children: ReactNode; onSubmit(): Promise<boolean>; busy: boolean; error: string | undefined; submit: string }) {
  const [open, setOpen] = useState(false);
  const send = async (e: FormEvent) => {
    e.preventDefault();
    if (await onSubmit()) setOpen(false);
  };
  return (
    <details className="settings" open={open} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>{summary}</summary>
      <form className="settings-form" onSubmit={send}>
        {children}
        {error && <Alert>{error}</Alert>}
        <div className="actions">
          <button type="submit" disabled={busy}>
            {submit}
          </button>
        </div>
      </form>
    </details>
  );
}

const numberOrNull = (text: string) => (text.trim() === '' ? null : Number(text));
const listOf = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function NewQueueForm() {
  const create = useMutation(CreateQueue);
  const [name, setName] = useState('');
  const [rate, setRate] = useState('');
  const [description, setDescription] = useState('');
  return (
    <Folded
      summary="New queue"
      submit="Create queue"
      busy={create.busy}
      error={create.error?.message}
      onSubmit={async () => {
        const made = await create.run({ input: { name: name.trim(), ...(rate.trim() && { rate: Number(rate) }), ...(description.trim() && { description }) } });
        if (made) navigate(href('queues', made.createQueue.name));
        return !!made;
      }}
    >
      <label>
        Name <input required value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Rate (tasks at once) <input type="number" min={1} step={1} value={rate} onChange={(e) => setRate(e.target.value)} placeholder="default" />
      </label>
      <label>
        Description <input value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
    </Folded>
  );
}

/** A queue's settings as they are now, changed together. */
export function QueueSettingsForm({ name }: { name: string }) {
  const { data, refetch } = useQuery(QueueSettings, { name });
  const update = useMutation(UpdateQueue);
  const [form, setForm] = useState({ description: '', rate: '', max: '', labels: '' });
  const queue = data?.queue;
  useEffect(() => {
    if (queue) setForm({ description: queue.description, rate: String(queue.rate), max: queue.maxConcurrentDispatches === null || queue.maxConcurrentDispatches === undefined ? '' : String(queue.maxConcurrentDispatches), labels: queue.labels.join(', ') });
  }, [queue]);
  const field = (key: keyof typeof form) => ({ value: form[key], onChange: (e: { target: { value: string } }) => setForm((f) => ({ ...f, [key]: e.target.value })) });
  return (
    <Folded
      summary="Settings"
      submit="Save settings"
      busy={update.busy}
      error={update.error?.message}
      onSubmit={async () => {
        const saved = await update.run({
          name,
          input: { description: form.description, rate: Number(form.rate), maxConcurrentDispatches: numberOrNull(form.max) ?? 0, labels: listOf(form.labels) },
        });
        if (saved) refetch();
        return !!saved;
      }}
    >
      <label>
        Description <input {...field('description')} />
      </label>
      <label>
        Rate (tasks at once, every process together) <input type="number" min={1} step={1} required {...field('rate')} />
      </label>
      <label>
        At most per process <input type="number" min={0} step={1} {...field('max')} placeholder="default share" />
      </label>
      <label>
        Labels (comma-separated) <input {...field('labels')} />
      </label>
    </Folded>
  );
}

export interface JobSettings {
  name: string;
  description: string;
  schedule: string;
  timeZone: string;
  target: { kind: string; http?: { url: string; httpMethod?: string | null } | null; task?: { queue: string } | null };
}

/** A new cron job, or an existing one's schedule, zone, description and target. */
export function JobForm({ job, onSaved }: { job?: JobSettings; onSaved?(): void }) {
  const create = useMutation(CreateJob);
  const update = useMutation(UpdateJob);
  const [form, setForm] = useState(() => ({
    name: job?.name ?? '',
    description: job?.description ?? '',
    schedule: job?.schedule ?? '',
    timeZone: job?.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    kind: job?.target.kind === 'TASK' ? 'TASK' : 'HTTP',
    url: job?.target.http?.url ?? '',
    method: (job?.target.http?.httpMethod as HttpMethod | undefined) ?? 'POST',
    queue: job?.target.task?.queue ?? '',
  }));
  const field = (key: keyof typeof form) => ({ value: form[key], onChange: (e: { target: { value: string } }) => setForm((f) => ({ ...f, [key]: e.target.value })) });
  const target: JobTargetInput = form.kind === 'TASK' ? { task: { queue: form.queue.trim() } } : { http: { url: form.url.trim(), httpMethod: form.method } };
  const busy = create.busy || update.busy;
  return (
    <Folded
      summary={job ? 'Edit job' : 'New job'}
      submit={job ? 'Save job' : 'Create job'}
      busy={busy}
      error={(job ? update : create).error?.message}
      onSubmit={async () => {
        const common = { schedule: form.schedule.trim(), timeZone: form.timeZone.trim(), description: form.description, target };
        if (job) {
          const saved = await update.run({ name: job.name, input: common });
          if (saved) onSaved?.();
          return !!saved;
        }
        const made = await create.run({ input: { name: form.name.trim(), ...common } });
        if (made) navigate(href('jobs', made.createJob.name));
        return !!made;
      }}
    >
      {!job && (
        <label>
          Name <input required {...field('name')} />
        </label>
      )}
      <label>
        Schedule (cron) <input required {...field('schedule')} placeholder="0 2 * * *" />
      </label>
      <label>
        Time zone <input required {...field('timeZone')} />
      </label>
      <label>
        Description <input {...field('description')} />
      </label>
      <label>
        Target
        <select {...field('kind')}>
          <option value="HTTP">HTTP request</option>
          <option value="TASK">a task in a queue</option>
        </select>
      </label>
      {form.kind === 'HTTP' ? (
        <>
          <label>
            URL <input type="url" required {...field('url')} />
          </label>
          <label>
            Method
            <select {...field('method')}>
              {HTTP_METHODS.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
        </>
      ) : (
        <label>
          Queue <input required {...field('queue')} />
        </label>
      )}
    </Folded>
  );
}
