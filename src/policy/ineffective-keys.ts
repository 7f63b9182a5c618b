// What `validate` warns about (SPEC 4): each key of a repository policy file
// that is looser than the value in force and so has no effect. A repository
// layer can only tighten: its larger limit, its `strict: false` or its allow
// entry that another layer does not allow changes nothing, and a person who
// wrote it should hear so rather than believe it holds.
import type { Problem } from '../config/problem.js';
import { describePolicy, type KeyRow } from './describe-policy.js';
import type { MergedPolicy } from './policy-model.js';

/** One warning per repository key (or list of entries) that has no effect, at its file and line. */
export function ineffectiveRepositoryKeys(policy: MergedPolicy): Problem[] {
  const rows = describePolicy(policy);
  const inForce = new Map(rows.filter((row) => row.merge === 'tightest' && row.status === 'in_force').map((row) => [row.key, row]));
  return rows.flatMap((row) => {
    if (row.layer !== 'repository' || row.file === null) return [];
    if (row.status === 'overridden') {
      const winner = inForce.get(row.key);
      // A tie (the same value written twice) is not looser.
      if (winner !== undefined && JSON.stringify(winner.value) === JSON.stringify(row.value)) return [];
      return [warning(row, overriddenText(row, winner))];
    }
    if (row.noEffect !== undefined && row.noEffect.length > 0) {
      const entries = row.noEffect.map((value) => JSON.stringify(value)).join(', ');
      return [
        warning(
          row,
          `${row.key}: ${entries} ${row.noEffect.length === 1 ? 'has' : 'have'} no effect: another layer that sets this key does not allow ${row.noEffect.length === 1 ? 'it' : 'them'}`,
        ),
      ];
    }
    return [];
  });
}

function overriddenText(row: KeyRow, winner: KeyRow | undefined): string {
  if (row.key === 'trust.firstParty') {
    return `${row.key}: ${JSON.stringify(row.value)} has no effect: only an organisation policy (--policy) can make a tool first party, and none sets trust.firstParty`;
  }
  const inForce = winner === undefined ? (row.overriddenBy ?? 'another layer') : `${JSON.stringify(winner.value)} (${winner.rule})`;
  return `${row.key}: ${JSON.stringify(row.value)} has no effect: it is looser than ${inForce}, which is in force (a repository policy can only tighten)`;
}

function warning(row: KeyRow, text: string): Problem {
  return { file: row.file ?? '', line: row.line ?? 1, col: row.col ?? 1, reason: `warning: ${text}` };
}
