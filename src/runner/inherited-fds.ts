// Host descriptors a process tool could inherit. Node opens its own
// descriptors close-on-exec, but a host started with stray descriptors from its
// parent (an agent, a shell, a CI runner) passes them on to every child, and
// neither child_process nor bubblewrap closes them. When there are any, the
// tool's argv is prefixed with a tiny closer that runs inside the sandbox.
import { readdir, readFile } from 'node:fs/promises';

/** Runs inside the sandbox: closes every descriptor above 2, then execs its arguments (env untouched). */
export const CLOSE_INHERITED_FDS_ARGV: readonly string[] = [
  '/usr/bin/perl',
  '-e',
  // fdopen each descriptor and close it; perl is part of every Debian-family base system.
  'opendir(my $d, "/proc/self/fd") or die "toolhost: cannot list descriptors\\n"; ' +
    'my @fds = grep { /^\\d+$/ && $_ > 2 } readdir($d); closedir($d); ' +
    'for my $fd (@fds) { open(my $h, "<&=", $fd) and close($h) } ' +
    'exec { $ARGV[0] } @ARGV or do { print STDERR "toolhost: cannot run $ARGV[0]: $!\\n"; exit 127 }',
  '--',
];

/** Descriptors above 2 of this process that lack close-on-exec (a child would inherit them). */
export async function listInheritableDescriptors(): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc/self/fdinfo');
  } catch {
    return [];
  }
  const inheritable: number[] = [];
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const info = await readFile(`/proc/self/fdinfo/${fd}`, 'latin1');
      const flags = /^flags:\s*([0-7]+)/m.exec(info)?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) inheritable.push(fd);
    } catch {
      // closed meanwhile (the readdir's own descriptor, for one)
    }
  }
  return inheritable;
}

// Linux's O_CLOEXEC as shown in /proc/PID/fdinfo (octal 02000000).
const O_CLOEXEC = 0o2000000;
