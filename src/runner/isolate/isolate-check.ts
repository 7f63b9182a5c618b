// `toolhost doctor`'s isolate-process check: starts a real isolate process the
// way a call would (spawner, bubblewrap, limits, isolated-vm, prelude), runs one
// tool call there, and reports what it saw: that it starts, that it lives in
// namespaces of its own (mount, pid, network), and its memory cap (its memory
// cgroup's limit, or the address-space cap where no memory controller is used).
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger } from '../../log.js';
import type { DoctorCheck } from '../bwrap/checks.js';
import { ProcessServices } from '../process-services.js';
import { doctorRunSpec } from '../doctor-spec.js';
import { defaultMessage, type ErrorCode } from '../../errors.js';
import type { RunControl } from '../run-types.js';
import { startIsolateProcess } from './isolate-launch.js';
import { memoryLimitOfProcess } from '../bwrap/sandbox-cgroups.js';

const TOOL = 'export default async function doctor() { return 6 * 7; }\n';

/** Starts an isolate process, runs `6 * 7` in it and reports its namespaces and memory cap. */
export async function checkIsolateProcess(bwrapPath?: string): Promise<DoctorCheck> {
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-doctor-isolate-'));
  const services = new ProcessServices();
  try {
    writeFileSync(join(dir, 'doctor.mjs'), TOOL);
    const spec = doctorRunSpec({
      name: 'doctor_isolate',
      mode: 'isolate',
      manifestDir: dir,
      entryPath: join(dir, 'doctor.mjs'),
      memoryMb: 16,
      stdout: 'json',
    });
    const started = await startIsolateProcess(spec, { logger: createSilentLogger(), services, ...(bwrapPath !== undefined ? { bwrapPath } : {}) });
    if (!started.ok) return fail(`isolate tools cannot run: ${started.reason}`);
    const { process: isolateProcess } = started;
    try {
      const control = deadlineControl(10_000);
      const outcome = await isolateProcess.run({ callId: 'doctor', args: {} }, { control }).finally(() => control.stop('cancelled'));
      if (!outcome.ok || outcome.json !== '42') return fail(`an isolate process started but did not run code (${outcome.ok ? outcome.json : outcome.code})`);
      const pid = findNodeDescendant(isolateProcess.pid ?? 0);
      const namespaced = pid !== undefined && ['mnt', 'pid', 'net'].every((kind) => namespaceOf(pid, kind) !== namespaceOf(process.pid, kind));
      const addressSpaceBytes = pid === undefined ? null : readAddressSpaceLimit(pid);
      const memoryBytes = pid === undefined ? null : memoryLimitOfProcess(pid, services.cgroups.support);
      const facts = { starts: true, namespaced, addressSpaceBytes, memoryBytes };
      if (!namespaced) return { name: 'isolate-process', status: 'fail', detail: 'the isolate process does not run in namespaces of its own', facts };
      const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
      const cap =
        memoryBytes !== null
          ? `memory held by its cgroup at ${mib(memoryBytes)} MiB`
          : addressSpaceBytes === null
            ? 'no memory cap'
            : `address space capped at ${mib(addressSpaceBytes)} MiB (no memory controller)`;
      return { name: 'isolate-process', status: 'ok', detail: `isolate tools run in an isolate process with its own mount, pid and network namespaces; ${cap}`, facts };
    } finally {
      isolateProcess.kill();
      await isolateProcess.exited;
    }
  } catch (error) {
    return fail(`the isolate process cannot be started: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await services.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A call's control with nothing but a deadline (the doctor's one call has no client to cancel it). */
function deadlineControl(timeoutMs: number): RunControl {
  const controller = new AbortController();
  let reason: ErrorCode | undefined;
  const listeners: Array<(reason: ErrorCode) => void> = [];
  let resolveStopped: (reason: ErrorCode) => void = () => undefined;
  const stopped = new Promise<ErrorCode>((resolve) => (resolveStopped = resolve));
  const stop = (why: ErrorCode): ErrorCode => {
    if (reason !== undefined) return reason;
    reason = why;
    clearTimeout(timer);
    controller.abort(why);
    resolveStopped(why);
    for (const listener of listeners.splice(0)) listener(why);
    return why;
  };
  const timer = setTimeout(() => stop('timeout'), timeoutMs);
  return {
    signal: controller.signal,
    timeoutMs,
    get reason() {
      return reason;
    },
    stopped,
    stop,
    onStop(listener) {
      if (reason !== undefined) listener(reason);
      else listeners.push(listener);
      return () => undefined;
    },
    failure() {
      return reason === 'timeout'
        ? { code: 'timeout', message: defaultMessage('timeout'), details: { timeoutMs } }
        : { code: 'cancelled', message: defaultMessage('cancelled'), details: {} };
    },
  };
}

function fail(detail: string): DoctorCheck {
  return { name: 'isolate-process', status: 'fail', detail, facts: { starts: false, namespaced: false, addressSpaceBytes: null, memoryBytes: null } };
}

/** The node process below the sandbox's leader (bubblewrap and its pid-namespace init sit between). */
function findNodeDescendant(leader: number): number | undefined {
  let level = [leader];
  for (let depth = 0; depth < 6 && level.length > 0; depth++) {
    const next: number[] = [];
    for (const pid of level) {
      for (const child of childrenOf(pid)) {
        if (readText(`/proc/${child}/cmdline`).includes('isolate-process.mjs') && readText(`/proc/${child}/comm`).trim() === 'node') return child;
        next.push(child);
      }
    }
    level = next;
  }
  return undefined;
}

function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks.flatMap((tid) => readText(`/proc/${pid}/task/${tid}/children`).split(' ').filter(Boolean).map(Number));
}

function namespaceOf(pid: number, kind: string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/${kind}`);
  } catch {
    return undefined;
  }
}

function readAddressSpaceLimit(pid: number): number | null {
  const line = /^Max address space\s+(\S+)/m.exec(readText(`/proc/${pid}/limits`))?.[1];
  const bytes = line === undefined || line === 'unlimited' ? NaN : Number(line);
  return Number.isFinite(bytes) ? bytes : null;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
