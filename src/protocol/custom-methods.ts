// Methods beyond the MCP spec that `toolhost serve` answers (SPEC section 9:
// `toolhost/render`, `toolhost/parse`). Each entry registers its handlers on
// every server instance the stdio entry builds, before it connects; add one
// with `server.setRequestHandler('toolhost/x', { params, result }, handler)`.
import { registerFormatMethods } from './format-methods.js';
import type { RegisterMethods } from './server.js';

export const CUSTOM_METHODS: readonly RegisterMethods[] = [registerFormatMethods];
