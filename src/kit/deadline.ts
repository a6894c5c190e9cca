/** True when `work` settles within `ms` (≤ 0: only if it already has); false when the time ran out first. */
export async function untilDeadline(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms)))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
