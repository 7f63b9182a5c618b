// Reads the policy layers, most authoritative first: the organisation files
// given with --policy (in order), then the repository's `policies/*.yaml|yml`
// in the workspace (top level only, sorted by name: sub-folders such as
// policies/org/ are never read as repository policy).
import { readdirSync } from 'node:fs';
import { realPathOr } from '../config/real-path.js';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { Problem } from '../config/problem.js';
import { readYamlFile } from '../config/yaml-source.js';
import type { PolicyFile } from './policy-model.js';
import { checkPolicyDocument } from './policy-schema.js';

interface LoadPoliciesOptions {
  /** Organisation policy files, in the order given. */
  readonly policyFiles: readonly string[];
  /** The workspace; its `policies/` folder is the repository layer. */
  readonly workspace: string;
  /** For display paths; default process.cwd(). */
  readonly cwd?: string;
  /** How a file of a layer is named in problems and rule names; default relative to cwd when inside it. */
  readonly displayPathOf?: (absolute: string, layer: PolicyFile['layer']) => string;
}

interface LoadedPolicies {
  /** Every file that loaded, organisation files first. */
  readonly files: readonly PolicyFile[];
  readonly problems: readonly Problem[];
}

/** The folder, under the workspace, that holds the repository layer. */
const REPOSITORY_POLICY_DIR = 'policies';

/** Loads and checks every policy file; a file with a problem contributes nothing. */
export function loadPolicies(options: LoadPoliciesOptions): LoadedPolicies {
  const cwd = options.cwd ?? process.cwd();
  const organisation = options.policyFiles.map((file) => resolve(cwd, file));
  const seen = new Set(organisation.map((path) => realPathOr(path)));
  // A file given with --policy is organisation policy even if it also sits in policies/.
  const repository = listRepositoryFiles(resolve(cwd, options.workspace)).filter((file) => !seen.has(realPathOr(file)));

  const files: PolicyFile[] = [];
  const problems: Problem[] = [];
  for (const [layer, paths] of [
    ['organisation', organisation],
    ['repository', repository],
  ] as const) {
    for (const path of paths) {
      const result = loadPolicyFile(path, layer, options.displayPathOf ? options.displayPathOf(path, layer) : displayPath(path, cwd));
      if (result.ok) files.push(result.file);
      else problems.push(...result.problems);
    }
  }
  return { files, problems };
}

/** Loads one policy file as the given layer. */
function loadPolicyFile(path: string, layer: PolicyFile['layer'], file: string): { ok: true; file: PolicyFile } | { ok: false; problems: Problem[] } {
  const parsed = readYamlFile(path, file);
  if (!parsed.ok) return { ok: false, problems: parsed.problems };
  const checked = checkPolicyDocument(parsed.source);
  if (!checked.ok) return { ok: false, problems: checked.problems };
  const mode = checked.data.mode ?? 'enforce';
  if (mode === 'shadow' && layer === 'repository') {
    // A repository must not be able to switch its own rules off by declaring them a trial.
    return {
      ok: false,
      problems: [parsed.source.problemAt(['mode'], 'mode: shadow is only allowed in organisation policy files (given with --policy)')],
    };
  }
  return {
    ok: true,
    file: Object.freeze({ path, file, layer, name: checked.data.name, mode, source: parsed.source, data: checked.data }),
  };
}

function listRepositoryFiles(workspace: string): string[] {
  const dir = join(workspace, REPOSITORY_POLICY_DIR);
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return []; // no policies/ folder: only organisation files and the built-in baseline apply
  }
  return entries
    .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && /\.ya?ml$/.test(entry.name))
    .map((entry) => entry.name)
    .sort()
    .map((name) => join(dir, name));
}

/** Relative to the working directory when inside it, else absolute. */
function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}
