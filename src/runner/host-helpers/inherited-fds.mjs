// Descriptors a child would inherit. Node opens its own descriptors
// close-on-exec, but a process started with stray descriptors from its parent
// (an agent, a shell, a CI runner) passes them on to every child, and neither
// child_process nor bubblewrap closes them. The spawner closes them once at
// start (spawner.mjs); tests use the listing to prove none reach a tool.
// Plain ESM with no imports beyond node: so the spawner can load it as is.
import { readdirSync, readFileSync } from 'node:fs';

// Linux's O_CLOEXEC as shown in /proc/PID/fdinfo (octal 02000000).
const O_CLOEXEC = 0o2000000;

/** Descriptors above 2 of this process that lack close-on-exec. */
export function listInheritableDescriptors() {
  let entries;
  try {
    entries = readdirSync('/proc/self/fdinfo');
  } catch {
    return [];
  }
  const inheritable = [];
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1'))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) inheritable.push(fd);
    } catch {
      // closed meanwhile (the directory listing's own descriptor, for one)
    }
  }
  return inheritable;
}
