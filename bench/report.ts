/** Plain-text tables and number formats for the benchmark's report. */

export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  '))
    .join('\n');
}

export function ratio(numerator: number, denominator: number): string {
  return denominator > 0 && Number.isFinite(numerator) ? `${(numerator / denominator).toFixed(2)}×` : 'n/a';
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The median of `values` and, when there are several, their range: `0.55 (0.46–0.56)`. */
export function medianAndRange(values: readonly number[], digits = 2, unit = ''): string {
  const text = `${median(values).toFixed(digits)}${unit}`;
  return values.length < 2 ? text : `${text} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function ms(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : 'n/a';
}

/** Least-squares slope of y over x. */
export function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  const n = points.length;
  if (n < 2) return 0;
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / n;
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / n;
  let numerator = 0;
  let denominator = 0;
  for (const p of points) {
    numerator += (p.x - meanX) * (p.y - meanY);
    denominator += (p.x - meanX) ** 2;
  }
  return denominator === 0 ? 0 : numerator / denominator;
}
