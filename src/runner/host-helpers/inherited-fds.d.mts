// Types for inherited-fds.mjs.

/** Descriptors above 2 of this process that lack close-on-exec (a child would inherit them). */
export function listInheritableDescriptors(): number[];
