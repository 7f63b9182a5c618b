// Types for egress-methods.mjs (the read_only method rule of SPEC section 3.2).
export const READ_ONLY_METHODS: readonly string[];
export function isMethodAllowedForClass(sideEffect: string | undefined, method: string): boolean;
