// SIGUSR1 makes a Node process open its inspector (127.0.0.1:9229 by default),
// and whatever connects to it runs code in that process. Every Node process of
// toolhost ignores SIGUSR1 once its own code runs (a listener replaces Node's
// handler), but Node installs that handler early in its start, tens of
// milliseconds before any of toolhost's code: a signal in that window opened the
// inspector, in an isolate process started ahead of its call, for instance.
// Node 20 has no --disable-sigusr1 (it came in 22.14), so the processes toolhost
// starts get an inspector address they cannot listen on: 192.0.2.1 is in
// TEST-NET-1 (RFC 5737), documentation only, never a local address. The bind
// fails ("address not available"), and where net.ipv4.ip_nonlocal_bind lets it
// succeed, nothing on this machine can connect to it.

/** The Node flag every Node process toolhost starts is given: its inspector can never listen. */
export const UNREACHABLE_INSPECTOR_FLAG = '--inspect-port=192.0.2.1:9229';
