import { readdirSync, readFileSync } from 'node:fs';

/** Linux reports CPU in clock ticks of 10 ms (USER_HZ 100). */
const TICK_MS = 10;

/** The process's name and user + system CPU ms from /proc/<pid>/stat; null once it has ended. */
function statOf(pid: number | string): { name: string; ms: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS,
    };
  } catch {
    return null;
  }
}

/** CPU ms (user + system) a process has used so far, read from /proc (0 once it has ended). */
export const processCpuMs = (pid: number): number => statOf(pid)?.ms ?? 0;

/**
 * A reading of every PostgreSQL process's CPU on this machine. `since` gives the CPU ms they used
 * after it, counting each process from its own earlier reading: a backend that ended in between
 * takes its ticks with it instead of turning the sum negative, and one that started counts whole.
 */
export function postgresCpu(): { since(earlier: Map<string, number>): number; byPid: Map<string, number> } {
  const byPid = new Map<string, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = statOf(pid);
    if (stat?.name === 'postgres') byPid.set(pid, stat.ms);
  }
  return {
    byPid,
    since: (earlier) => [...byPid].reduce((sum, [pid, ms]) => sum + ms - (earlier.get(pid) ?? 0), 0),
  };
}
