import { describe, expect, it } from 'vitest';
import { isMethodAllowedForClass, READ_ONLY_METHODS } from '../../../sandbox/shared/egress-methods.mjs';

describe('isMethodAllowedForClass (the read_only class holds on the network)', () => {
  it.each(['DELETE', 'POST', 'PUT', 'PATCH', 'delete', 'CONNECT', 'TRACE'])('refuses %s for a read_only tool', (method) => {
    expect(isMethodAllowedForClass('read_only', method)).toBe(false);
  });
  it.each(['GET', 'HEAD', 'OPTIONS', 'get'])('allows %s for a read_only tool', (method) => {
    expect(isMethodAllowedForClass('read_only', method)).toBe(true);
  });
  it('leaves the other classes and unclassified tools to the fetch itself', () => {
    for (const sideEffect of ['local_mutation', 'remote_mutation', 'destructive', undefined]) expect(isMethodAllowedForClass(sideEffect, 'DELETE')).toBe(true);
    expect(READ_ONLY_METHODS).toEqual(['GET', 'HEAD', 'OPTIONS']);
  });
});
