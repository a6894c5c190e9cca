// A small bar chart of a per-minute series: successes up, failures below them, drawn as SVG (no chart library:
// two rows of bars, each labelled for screen readers by the table beside it).

export interface MinuteCount {
  minute: string;
  succeeded: number;
  failed: number;
}

export function ActivityChart({ title, series, succeeded, failed }: { title: string; series: readonly MinuteCount[]; succeeded: string; failed: string }) {
  const width = 300;
  const height = 80;
  const mid = 56;
  const top = Math.max(1, ...series.map((m) => m.succeeded));
  const bottom = Math.max(1, ...series.map((m) => m.failed));
  const step = width / Math.max(1, series.length);
  const total = (key: 'succeeded' | 'failed') => series.reduce((n, m) => n + m[key], 0);
  const latest = series.at(-1);
  return (
    <figure className="chart">
      <figcaption>
        <strong>{title}</strong>
        <span>
          <span className="ok">{total('succeeded').toLocaleString('en')}</span> {succeeded} · <span className="bad">{total('failed').toLocaleString('en')}</span> {failed} in the last hour
          {latest && ` · ${latest.succeeded}/min now`}
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${title}: ${total('succeeded')} ${succeeded} and ${total('failed')} ${failed} over ${series.length} minutes`} preserveAspectRatio="none">
        <line x1="0" x2={width} y1={mid} y2={mid} className="axis" />
        {series.map((m, i) => {
          const up = (m.succeeded / top) * (mid - 4);
          const down = (m.failed / bottom) * (height - mid - 2);
          return (
            <g key={m.minute}>
              {up > 0 && <rect className="ok" x={i * step + 0.5} y={mid - up} width={Math.max(1, step - 1)} height={up} />}
              {down > 0 && <rect className="bad" x={i * step + 0.5} y={mid + 1} width={Math.max(1, step - 1)} height={down} />}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
