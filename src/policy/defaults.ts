// The built-in baseline: the value of every policy key that no layer sets.
// With no policy file at all these are the whole policy (SPEC section 4).
// The "Policy reference" of docs/policies.md lists the same values; a test keeps them in step.
import type { SideEffect } from '../registry/manifest.js';
import type { SandboxMode } from '../registry/manifest.js';
import { DEFAULT_INLINE_BUDGET_BYTES } from '../registry/result-limits.js';
import type { ApprovalsBy, InvalidArgumentsMode, JournalArguments, LimitKey } from './policy-model.js';
import type { OnUnknownTool, PolicyMode } from './types.js';

export const POLICY_DEFAULTS = {
  strict: true,
  toolsAllow: ['*'],
  toolsDeny: [],
  sideEffectsDeny: [],
  requireApproval: ['destructive'],
  firstParty: [],
  community: ['isolate', 'process_namespace'],
  limits: {
    maxTimeoutMs: 30_000,
    maxResultBytes: DEFAULT_INLINE_BUDGET_BYTES,
    maxMemoryMb: 256,
    maxCallsPerSession: 1000,
    maxConcurrency: 8,
    maxConsecutiveFailures: 20,
  },
  allowedRoots: ['${WORKSPACE}'],
  networkAllow: [],
  // What most process tools need to find binaries and print text; nothing that can carry a credential.
  envAllow: ['PATH', 'LANG', 'LC_ALL', 'TZ'],
  envSecrets: ['*_TOKEN', '*_KEY', '*SECRET*', '*PASSWORD*'],
  onUnknownTool: 'protocol_error',
  onInvalidArguments: 'error_result',
  approvalsBy: 'client',
  approvalsExpireAfterMs: 3_600_000,
  journalArguments: 'none',
} as const satisfies {
  strict: boolean;
  toolsAllow: readonly string[];
  toolsDeny: readonly string[];
  sideEffectsDeny: readonly SideEffect[];
  requireApproval: readonly SideEffect[];
  firstParty: readonly string[];
  community: readonly PolicyMode[];
  limits: Record<LimitKey, number>;
  allowedRoots: readonly string[];
  networkAllow: readonly string[];
  envAllow: readonly string[];
  envSecrets: readonly string[];
  onUnknownTool: OnUnknownTool;
  onInvalidArguments: InvalidArgumentsMode;
  approvalsBy: ApprovalsBy;
  approvalsExpireAfterMs: number;
  journalArguments: JournalArguments;
};

/** Memory a sandbox gets when its manifest sets no memoryMb, in MiB (then capped by limits.maxMemoryMb). */
export const DEFAULT_MEMORY_MB: Readonly<Record<SandboxMode, number>> = { isolate: 64, worker: 128, process: 256 };

/** Every mode: first-party tools are not restricted by `sandbox.community`. */
export const ALL_POLICY_MODES: readonly PolicyMode[] = ['isolate', 'worker', 'process', 'process_namespace'];
