import { describe, expect, it } from 'vitest';
import { approvalAnswerFrom } from '../../../src/protocol/approval-channel.js';

describe('approvalAnswerFrom: the modern retry answer, carried unparsed to the supervisor', () => {
  it.each([
    ['no inputResponses', undefined, undefined, undefined],
    ['no approve key', { other: { action: 'accept' } }, undefined, undefined],
    ['an accept', { approve: { action: 'accept', content: { approve: true } } }, undefined, { action: 'accept', content: { approve: true } }],
    ['a decline', { approve: { action: 'decline' } }, undefined, { action: 'decline' }],
    ['not an object', { approve: 'yes' }, undefined, { error: 'the approval answer was not an object' }],
    ['no action', { approve: { content: { approve: true } } }, undefined, { error: 'the approval answer had no action' }],
    ['dropped by the SDK', {}, ['approve'], { error: 'the approval answer was not an elicitation result' }],
  ])('%s', (_name, responses, dropped, expected) => {
    expect(approvalAnswerFrom(responses, dropped)).toEqual(expected);
  });
});
