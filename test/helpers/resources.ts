/**
 * Fixtures of the provider, account and tool tests (test/providers.test.ts, test/accounts.test.ts,
 * test/tools.test.ts): the same cast of users around one team workspace, and an agent using a tool (to see what deleting a tool or an account does to agents).
 */
import { createTestApp, type TestApp, type TestUser } from './app.ts'

/**
 * A fresh app and its cast: alice owns `team`, where carol is a `member` and dave an `admin`;
 * bob is another tenant (a member of nothing of alice's); `reader` is a read-only token of alice.
 */
export interface TeamCast {
  t: TestApp
  alice: TestUser
  bob: TestUser
  carol: TestUser
  dave: TestUser
  reader: string
  team: { uuid: string }
  /** Headers that make `team` the request's workspace context. */
  inTeam: () => Record<string, string>
}

/** Builds a {@link TeamCast} on a fresh app; the caller closes `t`. */
export async function teamCast(teamName: string): Promise<TeamCast> {
  const t = await createTestApp()
  const alice = await t.make.user({ name: 'Alice Owner' })
  const bob = await t.make.user({ name: 'Bob Other' })
  const carol = await t.make.user({ name: 'Carol Member' })
  const dave = await t.make.user({ name: 'Dave Admin' })
  const team = await t.make.workspace(alice, { name: teamName })
  await t.make.member(team, alice, carol, 'member')
  await t.make.member(team, alice, dave, 'admin')
  const reader = (await t.as(alice).accessTokens.create({ name: 'reader', abilities: ['read'] })).data.access_token
  return { t, alice, bob, carol, dave, reader, team, inTeam: () => ({ 'x-workspace-uuid': team.uuid }) }
}


/**
 * An agent of `userId` in workspace `workspaceUuid` using tool `toolUuid` (with account
 * `accountUuid` when given), inserted directly; answers the agent's id.
 */
export async function agentUsing(
  t: TestApp,
  o: { userId: number; workspaceUuid: string; toolUuid: string; accountUuid?: string },
): Promise<number> {
  const [agent] = await t.sql(
    `insert into agents (uuid, name, user_id, workspace_id, created_at, updated_at)
     values (gen_random_uuid(), 'Uses a tool', ?, (select id from workspaces where uuid = ?), now(), now()) returning id::float8 as id`,
    [o.userId, o.workspaceUuid],
  )
  await t.sql(
    `insert into agent_tools (agent_id, tool_id, account_id, position, created_at)
     values (?, (select id from tools where uuid = ?), (select id from accounts where uuid = ?), 0, now())`,
    [agent.id, o.toolUuid, o.accountUuid ?? null],
  )
  return Number(agent.id)
}

/**
 * Everyone but its creator in its workspace, for a private resource (thread, message, memory)
 * carol made in `team`: bob (another tenant), the team's owner alice and admin dave in the team,
 * and carol herself in another workspace. Each gets a 404 that says nothing of it. Spread one
 * into a request's options (`t.http(method, path, { ...caller, body })`).
 */
export function strangersOfCarols(cast: Pick<TeamCast, 'alice' | 'bob' | 'carol' | 'dave' | 'inTeam'>): { token: string; headers: Record<string, string> }[] {
  return [
    { token: cast.bob.token, headers: {} },
    { token: cast.alice.token, headers: cast.inTeam() },
    { token: cast.dave.token, headers: cast.inTeam() },
    { token: cast.carol.token, headers: {} },
  ]
}
