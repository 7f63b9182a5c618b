// A manifest's `sandbox.env` (tool and server manifests, SPEC sections 2 and
// 2.1): a list of host names to pass through, or a map whose string values are
// literals (${WORKSPACE} expanded) and whose null values pass the host's value
// as the list form does. Host values stay governed by the policy (env.allow,
// env.secrets: policy/assess-tool.ts); a literal is checked-in content like
// the command, so it never reads the host's environment. What the policy
// still says about literals (a name matching env.secrets is refused) is
// checked once the policy is known (literalSecretProblems).
import type { Problem } from '../config/problem.js';
import type { YamlSource } from '../config/yaml-source.js';
import { WORKSPACE_VARIABLE } from './manifest-paths.js';

/** `sandbox.env` after loading. */
export interface SandboxEnv {
  /** Names whose host value is passed (list items and null map values), in file order. */
  readonly names: readonly string[];
  /** Values set as written, ${WORKSPACE} expanded, by name. */
  readonly literals: Readonly<Record<string, string>>;
}

export const NO_ENV: SandboxEnv = Object.freeze({ names: Object.freeze([]), literals: Object.freeze({}) });

/**
 * Variables the host sets inside the sandbox itself (the egress proxy's address): a
 * literal may not name them, since the host's value wins and a silent override of a
 * checked-in value would hide a mistake. Compared without regard to case.
 */
const HOST_SET_ENV_NAMES: readonly string[] = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY'];

type SandboxEnvResult = { readonly ok: true; readonly env: SandboxEnv } | { readonly ok: false; readonly problems: Problem[] };

/**
 * Reads `sandbox.env` (data already checked by the manifest schema, or not: the
 * loader also runs this on data that failed it, so it reads defensively).
 * `path` is where `env` is in the file (`['sandbox', 'env']`).
 */
export function readSandboxEnv(source: YamlSource, declared: unknown, path: readonly (string | number)[], workspace: string): SandboxEnvResult {
  if (declared === undefined) return { ok: true, env: NO_ENV };
  if (Array.isArray(declared))
    return {
      ok: true,
      env: freeze(
        declared.filter((name): name is string => typeof name === 'string'),
        {},
      ),
    };
  if (typeof declared !== 'object' || declared === null) return { ok: true, env: NO_ENV };
  const names: string[] = [];
  const literals: Record<string, string> = {};
  const problems: Problem[] = [];
  for (const [name, value] of Object.entries(declared)) {
    if (value === null) {
      names.push(name);
      continue;
    }
    if (typeof value !== 'string') continue;
    if (HOST_SET_ENV_NAMES.includes(name.toUpperCase())) {
      problems.push(source.problemAt([...path, name], `env ${name} is set by the host for the sandbox's egress proxy; a manifest may not set it`, 'key'));
      continue;
    }
    literals[name] = value.split(WORKSPACE_VARIABLE).join(workspace);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, env: freeze(names, literals) };
}

/** A manifest whose literals are checked against the policy's env.secrets. */
interface LiteralEnvOwner {
  readonly source: YamlSource;
  /** Where `sandbox.env` is in the file. */
  readonly envPath: readonly (string | number)[];
  readonly literals: Readonly<Record<string, string>>;
}

/**
 * A literal for a name matching a secret glob is refused at load: a secret does
 * not belong in a checked-in file, and the redactor knows only the host's secret
 * values, so the tool could hand this one back to the model unredacted.
 */
export function literalSecretProblems(owners: readonly LiteralEnvOwner[], isSecretName: (name: string) => string | undefined): Problem[] {
  const problems: Problem[] = [];
  for (const owner of owners) {
    for (const name of Object.keys(owner.literals)) {
      const glob = isSecretName(name);
      if (glob !== undefined) {
        problems.push(
          owner.source.problemAt(
            [...owner.envPath, name],
            `env ${name} matches the secret name "${glob}" (env.secrets): a secret may not be written in a manifest (a tool never gets a secret, and a value set here would reach it and the model unredacted)`,
            'key',
          ),
        );
      }
    }
  }
  return problems;
}

function freeze(names: readonly string[], literals: Record<string, string>): SandboxEnv {
  return Object.freeze({ names: Object.freeze([...names]), literals: Object.freeze(literals) });
}

/** Every loaded tool and server manifest that sets literal env values. */
export function envLiteralOwners(loaded: {
  readonly manifests: readonly { readonly source: YamlSource; readonly sandbox: { readonly envLiterals: Readonly<Record<string, string>> } }[];
  readonly servers: readonly { readonly source: YamlSource; readonly envLiterals: Readonly<Record<string, string>> }[];
}): LiteralEnvOwner[] {
  const owners: LiteralEnvOwner[] = [];
  for (const manifest of loaded.manifests)
    if (Object.keys(manifest.sandbox.envLiterals).length > 0) owners.push({ source: manifest.source, envPath: ['sandbox', 'env'], literals: manifest.sandbox.envLiterals });
  for (const server of loaded.servers)
    if (Object.keys(server.envLiterals).length > 0) owners.push({ source: server.source, envPath: ['sandbox', 'env'], literals: server.envLiterals });
  return owners;
}
