/** Reading a text-format /metrics body in tests. */

/** The value of one series, written as it appears (`name{a="x"}`), or undefined when absent. */
export function sampleValue(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The sample lines of one family that carry labels. */
export function samplesOf(body: string, family: string): string[] {
  return body.split('\n').filter((line) => line.startsWith(`${family}{`));
}

/** The value at the end of a sample line. */
export function lineValue(line: string): number {
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}
