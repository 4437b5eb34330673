import { comparePositions, maxPosition, minPosition, parsePosition } from './position';

describe('positions', () => {
  it('order PostgreSQL positions by transaction first, then identity', () => {
    expect(comparePositions('pg:900:5', 'pg:901:2')).toBeLessThan(0);
    expect(comparePositions('pg:901:2', 'pg:900:5')).toBeGreaterThan(0);
    expect(comparePositions('pg:900:5', 'pg:900:6')).toBeLessThan(0);
    expect(comparePositions('pg:900:5', 'pg:900:5')).toBe(0);
    expect(comparePositions('pg:10:9', 'pg:9:10')).toBeGreaterThan(0);
  });

  it('refuse malformed positions and positions of different stores', () => {
    expect(() => parsePosition('pg:1')).toThrow("'pg:1' is not an event-store position.");
    expect(() => comparePositions('pg:1:1', 'esdb:1:1')).toThrow(/come from different event stores/);
  });

  it('pick the later position, null counting as the start', () => {
    expect(maxPosition(null, 'pg:1:1')).toBe('pg:1:1');
    expect(maxPosition('pg:2:1', 'pg:1:9')).toBe('pg:2:1');
    expect(maxPosition(null, null)).toBeNull();
  });

  it('pick the earlier position, null counting as the start', () => {
    expect(minPosition(null, 'pg:1:1')).toBeNull();
    expect(minPosition('pg:2:1', 'pg:1:9')).toBe('pg:1:9');
    expect(minPosition('pg:1:1', 'pg:1:1')).toBe('pg:1:1');
  });
});
