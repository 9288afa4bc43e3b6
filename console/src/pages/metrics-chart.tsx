import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { get, seg } from '../api';
import { ErrorLine, Loading } from '../ui';

interface Series {
  history: string;
  bucketSeconds: number;
  series: Array<{ t: string | number; accepted: number; delivered: number; failed: number }>;
}

const epoch = (t: string | number) => (typeof t === 'number' ? (t > 1e12 ? t / 1000 : t) : Date.parse(t) / 1000);

/** Accepted, delivered and failed events distributed to integrations, over 1h, 24h or 7d (uPlot). */
export function MetricsChart(props: { tenant: string; history: '1h' | '24h' | '7d' }) {
  const box = useRef<HTMLDivElement>(null);
  const [data, setData] = useState<Series | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    setData(null);
    get<Series>(`/waas/producer/${seg(props.tenant)}/metrics/series?history=${props.history}`).then(setData, setError);
  }, [props.tenant, props.history]);

  useEffect(() => {
    if (!data || !box.current) return undefined;
    const el = box.current;
    const rows = data.series;
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 260,
        series: [
          {},
          { label: 'Accepted', stroke: '#2563eb', width: 2 },
          { label: 'Delivered', stroke: '#16a34a', width: 2 },
          { label: 'Failed', stroke: '#dc2626', width: 2 },
        ],
        axes: [{}, { label: 'events' }],
      },
      [rows.map((r) => epoch(r.t)), rows.map((r) => r.accepted), rows.map((r) => r.delivered), rows.map((r) => r.failed)],
      el,
    );
    const onResize = () => plot.setSize({ width: Math.max(280, el.clientWidth), height: 260 });
    addEventListener('resize', onResize);
    return () => {
      removeEventListener('resize', onResize);
      plot.destroy();
    };
  }, [data]);

  if (error) return <ErrorLine error={error} />;
  const sum = (k: 'accepted' | 'delivered' | 'failed') => data?.series.reduce((n, r) => n + r[k], 0) ?? 0;
  return (
    <figure class="chart">
      {!data && <Loading />}
      {data && (
        <figcaption data-testid="metrics-totals">
          Over {data.history}: <strong>{sum('accepted')}</strong> accepted, <strong>{sum('delivered')}</strong> delivered, <strong>{sum('failed')}</strong> failed
          <span class="muted"> ({data.bucketSeconds / 60}-minute buckets)</span>
        </figcaption>
      )}
      <div ref={box} class="chart-box" />
    </figure>
  );
}
