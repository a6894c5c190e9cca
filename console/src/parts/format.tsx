// How times and statuses read in the console.

const local = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** An instant in the browser's time zone, with the ISO text as a tooltip. */
export function Time({ at, zone }: { at: string | null | undefined; zone?: string }) {
  if (!at) return <span className="muted">—</span>;
  const date = new Date(at);
  // (dateStyle and timeStyle do not combine with timeZoneName: the fields are named one by one.)
  const text = zone ? new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: zone, timeZoneName: 'short' }).format(date) : local.format(date);
  return (
    <time dateTime={at} title={at}>
      {text}
    </time>
  );
}

/** A status word with its colour class (`status-failed`, ...). */
export function Status({ value }: { value: string }) {
  return <span className={`status status-${value.toLowerCase()}`}>{value}</span>;
}

/** The status, attempts and a time of a task, as cells of a task list's row. */
export function TaskCells({ task, timeLabel, at }: { task: { status: string; attempts: number; maxAttempts: number }; timeLabel: string; at: string | null | undefined }) {
  return (
    <>
      <span role="cell" data-label="Status">
        <Status value={task.status} />
      </span>
      <span role="cell" data-label="Attempts">
        {task.attempts}/{task.maxAttempts}
      </span>
      <span role="cell" data-label={timeLabel}>
        <Time at={at} />
      </span>
    </>
  );
}

export const TASK_STATUSES = ['BLOCKED', 'READY', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export const NOTIFICATION_STATUSES = ['PENDING', 'SENDING', 'DELIVERED', 'FAILED', 'EXPIRED', 'CANCELLED', 'READ', 'ARCHIVED'] as const;
export const CHANNELS = ['WEBHOOK', 'CHAT_A', 'CHAT_B', 'SMS', 'PUSH', 'GENERAL', 'GAPS', 'EMAIL'] as const;
