/**
 * CPU time of processes, read from Linux's /proc (utime + stime, in clock ticks of 10 ms), so
 * that each row can say how much CPU one request cost the server and PostgreSQL. On a machine
 * without /proc the readings are null and the columns say "n/a".
 */
import { readFileSync } from 'node:fs'

/** Clock ticks per second of /proc/<pid>/stat; 100 on every common Linux build. */
const TICKS_PER_SECOND = 100

/** CPU seconds a process has used so far, or null when it cannot be read. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
  } catch {
    return null
  }
}

/** CPU seconds of each readable process among `pids`. */
export function cpuSnapshot(pids: number[]): Map<number, number> {
  const snapshot = new Map<number, number>()
  for (const pid of pids) {
    const seconds = cpuSeconds(pid)
    if (seconds !== null) snapshot.set(pid, seconds)
  }
  return snapshot
}

/** CPU seconds used between two snapshots by the processes readable in both (an exited one is left out). */
export function cpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? seconds)
  return total
}

/** Busy CPU seconds of the whole machine so far (all cores, everything but idle and iowait), or null. */
export function machineBusySeconds(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]
    // user nice system idle iowait irq softirq steal
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number)
    return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND
  } catch {
    return null
  }
}
