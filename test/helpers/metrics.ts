/**
 * One sample of a Prometheus text exposition as /metrics writes it (`name{labels} value`), `labels` as written
 * (`writer="queue_create"`); NaN when there is none (a histogram shows a label set once it has observed something).
 */
export function sampleOf(text: string, name: string, labels: string): number {
  const prefix = `${name}{${labels}} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? Number.NaN : Number(line.slice(prefix.length));
}
