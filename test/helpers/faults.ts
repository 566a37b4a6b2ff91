/**
 * Lost database connections, injected at the driver (docs/operations.md, "Database deadlines"):
 * the statement, or the commit, of the service's own ORM fails as a connection PostgreSQL ended
 * fails (SQLSTATE 57P01, as `pg_terminate_backend` does), either before it ran or after it ran and
 * committed (its answer lost). Nothing of the service's code is replaced: on PostgreSQL the `pg`
 * client class of the ORM's pool answers the error, on PGlite the PGlite instance does (so
 * pg-boss, which shares it there, is reached too).
 */
import { DriverException } from '@mikro-orm/core'
import { PostgreSqlConnection } from '@mikro-orm/postgresql'
import type { PGlite, Transaction } from '@electric-sql/pglite'
import pg from 'pg'
import { vi } from 'vitest'
import type { Orm } from '../../src/platform/db.ts'

/** The driver's text of a terminated backend: what a firing's error must never show. */
export const TERMINATED = 'terminating connection due to administrator command'

/** An error as MikroORM hands on `pg`'s of SQLSTATE `code`. */
export function driverError(code: string, message: string): Error {
  const error = new pg.DatabaseError(message, message.length, 'error')
  error.code = code
  return new DriverException(error)
}

/** The error of a backend ended by `pg_terminate_backend` (SQLSTATE 57P01). */
export const terminated = (): Error => driverError('57P01', TERMINATED)

/** Where a connection is lost. */
export interface Fault {
  /** The statement it concerns, by its SQL text. */
  statement: RegExp
  /** `statement` (default): that statement's answer; `commit`: the commit of the transaction that ran it. */
  at?: 'statement' | 'commit'
  /** `before` (default): nothing of it runs; `after`: it runs (and commits), its answer is lost. */
  when?: 'before' | 'after'
  /** How many times (default 1). */
  times?: number
  /** The error it fails with (default {@link terminated}); another SQLSTATE for a fault that is no lost connection. */
  error?: () => Error
}

/** Faults armed on an ORM: how many were injected so far, and how to stop. */
export interface Armed {
  hits: () => number
  restore: () => void
}

/** What a wrapped query call does: runs `run`, or fails around it. */
type Decision = { fault: Required<Fault> } | null

function pick(faults: Required<Fault>[], text: string, at: 'statement' | 'commit'): Decision {
  const fault = faults.find((f) => f.at === at && f.times > 0 && (at === 'commit' || f.statement.test(text)))
  if (!fault) return null
  fault.times--
  return { fault }
}

/** Runs `run` (a promise of the driver) with `decision`'s fault around it. */
async function around<T>(decision: Decision, run: () => Promise<T>): Promise<T> {
  if (!decision) return run()
  if (decision.fault.when === 'before') throw decision.fault.error()
  await run()
  throw decision.fault.error()
}

/**
 * Arms `faults` on the ORM's connections: each fires `times` times on the matching statements (in
 * the order given when several match), then lets them through.
 */
export async function loseConnection(orm: Orm, ...faults: Fault[]): Promise<Armed> {
  const armed: Required<Fault>[] = faults.map((f) => ({ at: 'statement', when: 'before', times: 1, error: terminated, ...f }))
  const total = armed.reduce((sum, f) => sum + f.times, 0)
  const hits = () => total - armed.reduce((sum, f) => sum + f.times, 0)
  // Faults of `at: commit` wait for a statement of theirs in the same transaction.
  const statementFaults = armed.filter((f) => f.at === 'statement')
  const commitFaults = armed.filter((f) => f.at === 'commit')
  const matchesCommit = (text: string) => commitFaults.some((f) => f.times > 0 && f.statement.test(text))
  const connection = orm.em.getConnection()
  if (connection instanceof PostgreSqlConnection) {
    const pool = (await connection.getNativeClient()) as unknown as { Client: { prototype: { query: (...args: unknown[]) => unknown } } }
    const proto = pool.Client.prototype
    const original = proto.query
    // Clients whose transaction ran a statement a commit fault waits for.
    const pending = new WeakSet<object>()
    const spy = vi.spyOn(proto, 'query').mockImplementation(function (this: object, ...args: unknown[]) {
      const first = args[0]
      const text = typeof first === 'string' ? first : typeof first === 'object' && first && 'text' in first ? String(first.text) : ''
      if (!text) return original.apply(this, args)
      const callback = typeof args.at(-1) === 'function' ? (args.pop() as (error: unknown, result?: unknown) => void) : undefined
      let decision: Decision = null
      if (/^\s*commit\b/i.test(text) && pending.has(this)) {
        pending.delete(this)
        decision = pick(commitFaults, text, 'commit')
      } else if (/^\s*rollback\b/i.test(text)) pending.delete(this)
      else {
        if (matchesCommit(text)) pending.add(this)
        decision = pick(statementFaults, text, 'statement')
      }
      if (!decision) return callback ? original.apply(this, [...args, callback]) : original.apply(this, args)
      const result = around(decision, () => original.apply(this, args) as Promise<unknown>)
      if (!callback) return result
      result.then(
        (value) => callback(null, value),
        (error: unknown) => callback(error),
      )
      return undefined
    })
    return { hits, restore: () => spy.mockRestore() }
  }
  const pglite = (await connection.getNativeClient()) as unknown as PGlite
  const query = pglite.query.bind(pglite)
  const transaction = pglite.transaction.bind(pglite)
  const querySpy = vi
    .spyOn(pglite, 'query')
    .mockImplementation(((text: string, ...rest: unknown[]) =>
      around(pick(statementFaults, text, 'statement'), () => query(text, ...(rest as [])))) as PGlite['query'])
  const transactionSpy = vi.spyOn(pglite, 'transaction').mockImplementation((async <T>(callback: (tx: Transaction) => Promise<T>) => {
    let ranCommitStatement = false
    let value!: T
    const committed = transaction(async (tx) => {
      const txQuery = tx.query.bind(tx)
      const wrapped = new Proxy(tx, {
        get: (target, key) =>
          key === 'query'
            ? (text: string, ...rest: unknown[]) => {
                if (matchesCommit(text)) ranCommitStatement = true
                return around(pick(statementFaults, text, 'statement'), () => txQuery(text, ...(rest as [])))
              }
            : Reflect.get(target, key),
      })
      value = await callback(wrapped)
      // Lost before the commit: the transaction rolls back.
      const decision = ranCommitStatement ? pick(commitFaults, '', 'commit') : null
      if (decision?.fault.when === 'before') throw decision.fault.error()
      return decision
    })
    const decision = await committed
    if (decision) throw decision.fault.error()
    return value
  }) as PGlite['transaction'])
  return {
    hits,
    restore: () => {
      querySpy.mockRestore()
      transactionSpy.mockRestore()
    },
  }
}
