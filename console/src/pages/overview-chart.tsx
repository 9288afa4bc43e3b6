import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartLine {
  label: string;
  stroke: string;
  values: Array<number | null>;
}

const HEIGHT = 220;

/**
 * Lines over time with uPlot: made once per set of lines, then only given new
 * data (setData) when the overview polls, so a refresh does not flicker.
 */
export function LineChart(props: { title: string; times: number[]; lines: ChartLine[]; unit: string; testid: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = props.lines.map((l) => l.label).join('|');
  const data = [props.times, ...props.lines.map((l) => l.values)] as uPlot.AlignedData;

  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const made = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: HEIGHT,
        series: [{}, ...props.lines.map((l) => ({ label: l.label, stroke: l.stroke, width: 2, spanGaps: false }))],
        axes: [{}, { label: props.unit, size: 60 }],
        scales: { y: { range: (_u, min, max) => [Math.min(0, min ?? 0), Math.max(1, max ?? 1)] } },
      },
      data,
      el,
    );
    plot.current = made;
    const onResize = () => made.setSize({ width: Math.max(280, el.clientWidth), height: HEIGHT });
    addEventListener('resize', onResize);
    return () => {
      removeEventListener('resize', onResize);
      made.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return (
    <figure class="chart overview-chart" data-testid={props.testid}>
      <figcaption>{props.title}</figcaption>
      <div ref={box} class="chart-box overview-chart-box" />
    </figure>
  );
}
