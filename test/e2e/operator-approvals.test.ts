// Approvals by an operator, end to end (SPEC section 7.2), on both stores and
// across two hosts: a client that cannot be asked gets approval_required with
// an approval id, `toolhost approvals` lists it, `toolhost approve` decides it,
// and the repeat with _meta["toolhost/approvalId"] runs once, on either host.
// Replays, denials, expiry and other arguments are approval_denied. With
// `approvals: {by: operator}` even a client that could be asked is not.
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/mcp-clients.js';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres.js';
import { E2E_POLICY } from '../helpers/host-session.js';
import { makeFleet, type Fleet } from '../helpers/fleet-session.js';
import { wireErrorOf } from '../helpers/wire-results.js';

const STORES = [
  { name: 'sqlite', skip: undefined },
  { name: 'postgres', skip: postgresUnavailable },
] as const;

for (const store of STORES) {
  describe.skipIf(store.skip !== undefined)(`operator approvals across two hosts (${store.name} store)`, () => {
    let fleet: Fleet;
    let db: TestDatabase | undefined;
    let url: string;
    beforeAll(async () => ensureBuilt(), 300_000);
    beforeEach(async () => {
      fleet = makeFleet(`${E2E_POLICY}approvals:\n  expireAfterMs: 600000\n`);
      db = store.name === 'postgres' ? await createTestDatabase() : undefined;
      url = db?.url ?? `sqlite:${join(fleet.root, 'shared-journal.sqlite')}`;
    });
    afterEach(async () => {
      await fleet.cleanup();
      await db?.drop();
    });

    const cli = async (...args: string[]) => fleet.cli([...args, '--journal', url]);
    const pendingIds = async () => {
      const listed = await cli('approvals', '--json');
      expect(listed.code, listed.stderr).toBe(0);
      return (JSON.parse(listed.stdout) as Array<{ id: string }>).map((approval) => approval.id);
    };
    const note = (text: string, approvalId?: string) => ({
      name: 'note_writer',
      arguments: { text },
      ...(approvalId !== undefined ? { _meta: { 'toolhost/approvalId': approvalId } } : {}),
    });

    it('pending, approved once on another host, replay refused, denied, other arguments refused', async () => {
      const [a, b] = await Promise.all([fleet.start('a', url), fleet.start('b', url)]);

      const asked = wireErrorOf(await a.callTool(note('hello')));
      expect(asked).toMatchObject({ code: 'approval_required', rule: expect.stringContaining('approval') });
      const id = String(asked['approvalId']);
      // The exact command, with the journal it needs, works as given from any folder.
      expect(asked['approveCommand']).toBe(`toolhost approve ${id} --journal ${url}`);
      const listed = await cli('approvals', '--json');
      expect(JSON.parse(listed.stdout)).toEqual([
        expect.objectContaining({
          id,
          state: 'pending',
          tool: 'note_writer',
          sideEffect: 'local_mutation',
          principal: null,
          decidedBy: null,
          arguments: { text: 'hello' },
          hostId: expect.any(String),
        }),
      ]);
      const text = await cli('approvals');
      expect(text.stdout.split('\n')[0]).toMatch(/^ID\s+STATE\s+TOOL\s+CLASS\s+PRINCIPAL\s+AGE\s+EXPIRES$/);
      expect(text.stdout).toContain('  arguments  text: "hello"\n');
      expect(text.stdout).toContain(`  decide     toolhost approve ${id} --journal ${url} --as NAME`);

      // Before an operator decides, the repeat still waits.
      expect(wireErrorOf(await b.callTool(note('hello', id)))).toMatchObject({ code: 'approval_required', approvalId: id, state: 'pending' });
      const approve = await cli('approve', id, '--as', 'alice', '--note', 'checked with the team');
      expect(approve.code, approve.stderr).toBe(0);
      expect(await pendingIds()).toEqual([]);

      const ran = await b.callTool(note('hello', id));
      expect(ran['isError']).not.toBe(true);
      expect(ran['structuredContent']).toEqual({ written: 'hello' });
      // Spent: neither host runs it again.
      for (const host of [a, b]) expect(wireErrorOf(await host.callTool(note('hello', id)))).toMatchObject({ code: 'approval_denied', approvalId: id, reason: 'spent' });
      const all = JSON.parse((await cli('approvals', '--all', '--json')).stdout) as Array<Record<string, unknown>>;
      expect(all).toEqual([expect.objectContaining({ id, state: 'spent', decidedBy: 'alice', note: 'checked with the team', decidedVia: 'cli', spentBy: expect.any(String) })]);
      expect((await cli('approvals', '--all')).stdout).toMatch(/approved by alice at \S+ \(cli\): "checked with the team"/);

      // Approved for other arguments: refused.
      const other = String(wireErrorOf(await a.callTool(note('for prod')))['approvalId']);
      expect((await cli('approve', other)).code).toBe(0);
      expect(wireErrorOf(await b.callTool(note('for staging', other)))).toMatchObject({ code: 'approval_denied', reason: 'other_arguments' });

      // Denied: refused, and a second decision is refused too.
      const denied = String(wireErrorOf(await a.callTool(note('nope')))['approvalId']);
      expect((await cli('approve', denied, '--deny', '--as', 'bob')).code).toBe(0);
      expect(wireErrorOf(await b.callTool(note('nope', denied)))).toMatchObject({ code: 'approval_denied', reason: 'denied' });
      const again = await cli('approve', denied);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('already denied');

      // The journal holds each call with its approval.
      const audit = JSON.parse((await cli('audit', '--tool', 'note_writer', '--json')).stdout) as Array<Record<string, unknown>>;
      expect(audit.filter((record) => record['status'] === 'completed')).toHaveLength(1);
    });

    it('approvals by operator: even a client that could be asked is not; an expired approval is refused', async () => {
      const elicitations: string[] = [];
      const expiring = makeFleet(`${E2E_POLICY}approvals:\n  by: operator\n  expireAfterMs: 1\n`);
      try {
        const client = await expiring.start('c', url, { elicitations, elicit: () => ({ action: 'accept', content: { approve: true } }) });
        const asked = wireErrorOf(await client.callTool(note('late')));
        expect(asked.code).toBe('approval_required');
        expect(elicitations).toEqual([]);
        const id = String(asked['approvalId']);
        const approve = await expiring.cli(['approve', id, '--journal', url]);
        expect(approve.code).toBe(1);
        expect(approve.stderr).toContain('expired');
        expect(wireErrorOf(await client.callTool(note('late', id)))).toMatchObject({ code: 'approval_denied', reason: 'expired' });
      } finally {
        await expiring.cleanup();
      }
    });
  });
}
