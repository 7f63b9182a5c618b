import { describe, expect, it } from 'vitest';
import { isApproval } from '../../../../src/supervisor/stages/approval.js';

describe('isApproval', () => {
  it.each([
    [{ action: 'accept', content: { approve: true } }, true],
    [{ action: 'accept', content: { approve: true, note: 'ok' } }, true],
    [{ action: 'accept', content: { approve: 'true' } }, false],
    [{ action: 'accept', content: { approve: 1 } }, false],
    [{ action: 'accept', content: { approve: false } }, false],
    [{ action: 'accept' }, false],
    [{ action: 'accept', content: null }, false],
    [{ action: 'decline', content: { approve: true } }, false],
    [{ action: 'cancel' }, false],
    [{ action: 'ACCEPT', content: { approve: true } }, false],
    [{ error: 'x' }, false],
    [null, false],
    [undefined, false],
    ['accept', false],
  ])('%j → %s', (answer, approves) => {
    expect(isApproval(answer)).toBe(approves);
  });
});
