// `explain` and `serve` read one decision (policy/tool-decision.ts): for every tool a
// policy fixture denies or excludes, the rule and reason `explain --json`
// prints are the ones a call to it through the supervisor is refused with.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { explainTool } from '../../../src/cli/explain.js';
import { createHost } from '../../../src/host.js';
import { createSilentLogger } from '../../../src/log.js';
import { CallControl } from '../../../src/supervisor/call-control.js';
import { REPO_ROOT } from '../../helpers/mcp-clients.js';

const scratch = mkdtempSync(join(tmpdir(), 'toolhost-explain-serve-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const POLICY_SETS: Readonly<Record<string, readonly string[]>> = {
  'tight-org': ['test/fixtures/policies/tight-org.yaml'],
  'acme-baseline': ['policies/org/acme-baseline.yaml'],
  'acme-trial-shadow': ['policies/org/acme-trial-shadow.yaml'],
  'built-in defaults': [],
};

describe('explain and serve give the same rule and reason for the same denial', () => {
  it.each(Object.entries(POLICY_SETS))('under %s', async (name, policyFiles) => {
    const host = await createHost({
      manifestDirs: ['manifests', 'manifests/community'],
      policyFiles,
      workspace: REPO_ROOT,
      stateDir: join(scratch, name.replace(/\W/g, '-')),
      cwd: REPO_ROOT,
      logger: createSilentLogger(),
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      prepareSandboxes: false,
    });
    try {
      let denials = 0;
      for (const view of host.config.tools.values()) {
        const explained = explainTool(host.config, view, {});
        if (explained.decision !== 'deny') continue;
        denials++;
        const outcome = await host.supervisor.callTool({ name: view.manifest.name, args: {}, meta: {}, control: new CallControl(), approval: { kind: 'none' } });
        expect(outcome.kind, view.manifest.name).toBe('error');
        if (outcome.kind !== 'error') continue;
        expect(outcome.error.code).toBe(explained.code);
        expect(outcome.error.details).toEqual({ rule: explained.rule, reason: explained.reason });
        // With arguments, explain says what a call would meet: the same rule and reason.
        if (explained.arguments?.valid) expect(explained.arguments).toMatchObject({ outcome: 'deny', rule: explained.rule, reason: explained.reason });
      }
      if (name === 'tight-org') expect(denials).toBeGreaterThanOrEqual(2);
    } finally {
      await host.close();
    }
  });
});
