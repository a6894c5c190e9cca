import { Prisma } from '../../generated/prisma/client.js';
import { fromStatuses, type TaskAction } from '../task-transitions.js';

/**
 * `<column> IN ('READY', ...)`: the statuses `action` may start from (TASK_TRANSITIONS), inlined as literals because
 * they are constants of the code and array parameters do not reach PGlite intact.
 */
export function statusAllows(column: string, action: TaskAction): Prisma.Sql {
  return Prisma.raw(`${column} IN (${fromStatuses(action).map((s) => `'${s}'`).join(', ')})`);
}
