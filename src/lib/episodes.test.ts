import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { EpisodeLog, type EpisodeLine } from './episodes.js';

function episodes(options: { quietIntervalsToEnd?: number } = {}) {
  const clock = new FakeClock();
  const lines: EpisodeLine[] = [];
  const log = new EpisodeLog({ clock, intervalMs: 60_000, write: (line) => lines.push(line), ...options });
  return { clock, lines, log };
}

describe('EpisodeLog', () => {
  it('writes a start, one summary per interval with events, and an end with the totals, however many events', () => {
    const { clock, lines, log } = episodes();
    for (let second = 0; second < 600; second++) {
      for (let i = 0; i < 1_000; i++) log.note('drop', 1, { reason: `r${second}` });
      clock.advance(1_000);
    }
    log.end('drop');
    expect(lines.map((l) => l.phase)).toEqual(['start', ...Array<string>(10).fill('ongoing'), 'end']);
    expect(lines[0]).toMatchObject({ count: 1, total: 1, detail: { reason: 'r0' } });
    expect(lines[1]).toMatchObject({ count: 59_999, total: 60_000, durationSeconds: 60, detail: { reason: 'r59' } });
    expect(lines.at(-1)).toMatchObject({ phase: 'end', total: 600_000, durationSeconds: 600 });
    expect(log.active('drop')).toBe(false);
  });

  it('writes nothing for an interval without events, and ends after quiet intervals when asked to', () => {
    const { clock, lines, log } = episodes({ quietIntervalsToEnd: 2 });
    log.note('refused', 5, {});
    clock.advance(60_000);
    expect(lines.map((l) => l.phase)).toEqual(['start']);
    clock.advance(60_000);
    expect(lines.map((l) => l.phase)).toEqual(['start', 'end']);
    log.note('refused', 1, {});
    expect(lines.map((l) => l.phase)).toEqual(['start', 'end', 'start']);
  });

  it('endWhenQuiet ends at the next summary time with no event since, unless another event comes first; the duration runs to the call', () => {
    const { clock, lines, log } = episodes();
    log.note('failing', 1, {});
    clock.advance(30_000);
    log.endWhenQuiet('failing');
    log.note('failing', 1, {});
    clock.advance(60_000);
    clock.advance(60_000);
    expect(log.active('failing')).toBe(true);
    expect(lines.map((l) => l.phase)).toEqual(['start', 'ongoing']);
    clock.advance(20_000);
    log.endWhenQuiet('failing');
    clock.advance(9_000);
    expect(log.active('failing')).toBe(true);
    clock.advance(1_000);
    expect(lines.map((l) => l.phase)).toEqual(['start', 'ongoing', 'end']);
    expect(lines.at(-1)).toMatchObject({ total: 2, durationSeconds: 170 });
  });

  it('close ends every episode under way; discard forgets them without a line', () => {
    const { clock, lines, log } = episodes();
    log.note('a', 1, {});
    log.note('b', 2, {});
    log.close();
    expect(lines.filter((l) => l.phase === 'end').map((l) => [l.key, l.total])).toEqual([['a', 1], ['b', 2]]);
    log.note('c', 1, {});
    log.note('c', 1, {});
    log.discard();
    clock.advance(600_000);
    expect(lines.map((l) => l.key)).toEqual(['a', 'b', 'a', 'b', 'c']);
    expect(clock.pending()).toBe(0);
  });
});
