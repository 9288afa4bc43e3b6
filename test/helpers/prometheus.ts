import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format';

/** A parsed /metrics scrape, with lookups by name and labels. */
export class Scrape {
  readonly families: Map<string, PromFamily>;

  readonly text: string;
  constructor(text: string) {
    this.text = text;
    this.families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
  }

  /** The value of a counter or gauge sample whose labels include `labels`; 0 when the series is absent. */
  value(name: string, labels: Record<string, string> = {}): number {
    const family = this.families.get(name);
    if (!family) throw new Error(`no metric family ${name} in the scrape`);
    let sum = 0;
    for (const sample of family.metrics) {
      if (Object.entries(labels).every(([k, v]) => sample.labels?.[k] === v)) sum += Number(sample.value ?? 0);
    }
    return sum;
  }

  /** The observation count of a histogram (summed over label sets matching `labels`). */
  count(name: string, labels: Record<string, string> = {}): number {
    const family = this.families.get(name);
    if (!family) throw new Error(`no metric family ${name} in the scrape`);
    let n = 0;
    for (const sample of family.metrics) {
      if (Object.entries(labels).every(([k, v]) => sample.labels?.[k] === v)) n += Number(sample.count ?? 0);
    }
    return n;
  }
}

export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  return new Scrape(await res.text());
}
