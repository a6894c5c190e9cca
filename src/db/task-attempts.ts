// What a task's history of attempts (TaskAttempt) keeps: written by the settle statement (src/db/sql/settleTask.ts),
// read through Task.history, and bounded for the query cost (src/pipeline/list-bounds.ts).

/** Ended attempts kept per task, the oldest trimmed as a new one ends: what an operator reads back. */
export const ATTEMPT_HISTORY = 20;
/** The start of an attempt's answer kept with it (characters). */
export const ATTEMPT_ANSWER_LIMIT = 1024;
