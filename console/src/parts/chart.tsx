import { useState } from 'react';

// A small bar chart of a per-minute series: successes up, failures below them, drawn as SVG (no chart library), with
// its scale (the largest minute above and below the axis), the first and last minute under it, and the counts of
// the minute under the pointer (or focus) read out beneath; each minute also carries them as its tooltip.

export interface MinuteCount {
  minute: string;
  succeeded: number;
  failed: number;
}

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const at = (minute: string) => clock.format(new Date(minute));

export function ActivityChart({ title, series, succeeded, failed }: { title: string; series: readonly MinuteCount[]; succeeded: string; failed: string }) {
  const [pointed, setPointed] = useState<number>();
  const width = 300;
  const height = 80;
  const mid = 56;
  const top = Math.max(1, ...series.map((m) => m.succeeded));
  const bottom = Math.max(1, ...series.map((m) => m.failed));
  const step = width / Math.max(1, series.length);
  const total = (key: 'succeeded' | 'failed') => series.reduce((n, m) => n + m[key], 0);
  const latest = series.at(-1);
  const describe = (m: MinuteCount) => `${at(m.minute)}: ${m.succeeded.toLocaleString('en')} ${succeeded}, ${m.failed.toLocaleString('en')} ${failed}`;
  const shown = pointed === undefined ? undefined : series[pointed];
  return (
    <figure className="chart">
      <figcaption>
        <strong>{title}</strong>
        <span>
          <span className="ok">{total('succeeded').toLocaleString('en')}</span> {succeeded} · <span className="bad">{total('failed').toLocaleString('en')}</span> {failed} in the last{' '}
          {series.length === 60 ? 'hour' : `${series.length} minutes`}
          {latest && ` · ${latest.succeeded}/min now`}
        </span>
      </figcaption>
      <div className="plot">
        <div className="y-axis" aria-hidden="true">
          <span className="ok" title={`most ${succeeded} in a minute`}>
            {top.toLocaleString('en')}
          </span>
          <span>0</span>
          <span className="bad" title={`most ${failed} in a minute`}>
            {bottom.toLocaleString('en')}
          </span>
        </div>
        <svg
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-label={`${title}: ${total('succeeded')} ${succeeded} and ${total('failed')} ${failed} over ${series.length} minutes`}
          preserveAspectRatio="none"
          onMouseLeave={() => setPointed(undefined)}
        >
          <line x1="0" x2={width} y1={mid} y2={mid} className="axis" />
          {series.map((m, i) => {
            const up = (m.succeeded / top) * (mid - 4);
            const down = (m.failed / bottom) * (height - mid - 2);
            return (
              <g key={m.minute} data-minute={m.minute} onMouseEnter={() => setPointed(i)} className={pointed === i ? 'pointed' : undefined}>
                <title>{describe(m)}</title>
                <rect className="hit" x={i * step} y={0} width={step} height={height} />
                {up > 0 && <rect className="ok" x={i * step + 0.5} y={mid - up} width={Math.max(1, step - 1)} height={up} />}
                {down > 0 && <rect className="bad" x={i * step + 0.5} y={mid + 1} width={Math.max(1, step - 1)} height={down} />}
              </g>
            );
          })}
        </svg>
      </div>
      {series.length > 0 && (
        <div className="x-axis" aria-hidden="true">
          <span>{at(series[0]!.minute)}</span>
          <span>{at(series.at(-1)!.minute)}</span>
        </div>
      )}
      <p className="readout" aria-live="polite">
        {shown ? describe(shown) : <span className="muted">Point at a minute for its counts.</span>}
      </p>
    </figure>
  );
}
