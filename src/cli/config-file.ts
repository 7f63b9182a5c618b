// toolhost.yaml: the host's settings in one file, so that no command needs the
// same flags again. Found in the working directory or the nearest parent (or
// named with --config); checked against schemas/toolhost.schema.json, with every
// problem at its file:line:col and an unknown key answered with "did you mean".
// Paths in it are relative to its folder, never to whoever runs the command.
import { existsSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { ErrorObject } from 'ajv';
import { validate as generatedToolhostFileValidator } from '../registry/generated/toolhost-file.mjs';
import { problemsFromShapeErrors } from '../registry/schema-errors.js';
import type { Problem } from '../config/problem.js';
import { readYamlFile } from '../config/yaml-source.js';

import { findToolhostFile, isFile, MAX_CONFIG_BYTES } from './config-file-find.js';

export { findToolhostFile };

/** The settings of one toolhost.yaml, every path absolute (resolved against the file's folder). */
interface ToolhostSettings {
  readonly manifests?: readonly string[];
  readonly policies?: readonly string[];
  readonly workspace?: string;
  readonly state?: string;
  /** sqlite:ABSOLUTE-PATH or a postgres:// URL as written. */
  readonly journal?: string;
  readonly logFile?: string;
  readonly http?: {
    readonly listen: string;
    readonly authTokens?: string;
    readonly authIssuer?: string;
    readonly authAudience?: string;
    readonly authJwks?: string;
    readonly noAuth?: boolean;
    readonly publicUrl?: string;
    readonly allowedHosts?: readonly string[];
  };
}

export interface ToolhostFile {
  /** Absolute path of the toolhost.yaml. */
  readonly file: string;
  /** Its folder: the base of every relative path in it, and of the defaults. */
  readonly dir: string;
  readonly settings: ToolhostSettings;
}

type LoadToolhostFileResult = { readonly ok: true; readonly config: ToolhostFile } | { readonly ok: false; readonly problems: readonly Problem[] };

/** Reads and checks one toolhost.yaml; `displayName` is how problems name it. */
export function loadToolhostFile(file: string, displayName = file): LoadToolhostFileResult {
  const absolute = resolve(file);
  if (!existsSync(absolute)) return fail(displayName, 'no such file');
  if (!isFile(absolute)) return fail(displayName, 'not a file');
  if (statSync(absolute).size > MAX_CONFIG_BYTES) return fail(displayName, `larger than ${MAX_CONFIG_BYTES} bytes; a toolhost.yaml holds a few settings`);
  const parsed = readYamlFile(absolute, displayName);
  if (!parsed.ok) return { ok: false, problems: parsed.problems };
  const data = parsed.source.data ?? {};
  if (typeof data !== 'object' || Array.isArray(data)) return fail(displayName, 'toolhost.yaml must be a YAML mapping of settings');
  const validate = TOOLHOST_FILE_VALIDATOR;
  if (!validate(data)) return { ok: false, problems: problemsFromShapeErrors(parsed.source, oneSentencePerOneOf([...(validate.errors ?? [])])) };
  const dir = dirname(absolute);
  return { ok: true, config: { file: absolute, dir, settings: Object.freeze(resolveSettings(data as RawSettings, dir)) } };
}

type RawSettings = Omit<ToolhostSettings, 'manifests'> & { readonly manifests?: string | readonly string[] };

function resolveSettings(raw: RawSettings, dir: string): ToolhostSettings {
  const path = (value: string): string => resolve(dir, value);
  const manifests = raw.manifests === undefined ? undefined : typeof raw.manifests === 'string' ? [raw.manifests] : raw.manifests;
  const http = raw.http;
  return {
    ...(manifests !== undefined ? { manifests: manifests.map(path) } : {}),
    ...(raw.policies !== undefined ? { policies: raw.policies.map(path) } : {}),
    ...(raw.workspace !== undefined ? { workspace: path(raw.workspace) } : {}),
    ...(raw.state !== undefined ? { state: path(raw.state) } : {}),
    ...(raw.journal !== undefined ? { journal: resolveJournal(raw.journal, dir) } : {}),
    ...(raw.logFile !== undefined ? { logFile: path(raw.logFile) } : {}),
    ...(http !== undefined
      ? {
          http: {
            ...http,
            ...(http.authTokens !== undefined ? { authTokens: path(http.authTokens) } : {}),
            // A JWKS is a URL or a file: only a file is relative to this folder.
            ...(http.authJwks !== undefined && !URL.canParse(http.authJwks) ? { authJwks: path(http.authJwks) } : {}),
          },
        }
      : {}),
  };
}

function resolveJournal(url: string, dir: string): string {
  if (!url.startsWith('sqlite:')) return url;
  const path = url.slice('sqlite:'.length);
  return path === '' || isAbsolute(path) ? url : `sqlite:${resolve(dir, path)}`;
}

// `manifests` is a folder or a list: Ajv reports a failure of each branch and
// then of oneOf; a person needs one sentence.
function oneSentencePerOneOf(errors: ErrorObject[]): ErrorObject[] {
  const oneOfPaths = new Set(errors.filter((error) => error.keyword === 'oneOf').map((error) => error.instancePath));
  const kept = errors.filter((error) => ![...oneOfPaths].some((path) => error.keyword !== 'oneOf' && (error.instancePath === path || error.instancePath.startsWith(`${path}/`))));
  return kept.map((error) => (error.keyword === 'oneOf' ? { ...error, keyword: 'manifests', message: 'must be a folder or a list of folders' } : error));
}

/** schemas/toolhost.schema.json as code, generated ahead (scripts/generate-validators.mjs). */
const TOOLHOST_FILE_VALIDATOR = generatedToolhostFileValidator;

function fail(file: string, reason: string): LoadToolhostFileResult {
  return { ok: false, problems: [{ file, line: 1, col: 1, reason }] };
}
