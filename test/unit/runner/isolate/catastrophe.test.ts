import { describe, expect, it } from 'vitest';
import { onCatastrophe, reportCatastrophe } from '../../../../src/runner/isolate/catastrophe.js';

describe('catastrophe reports', () => {
  it('reach every subscriber until it unsubscribes', () => {
    const seen: string[] = [];
    const stop = onCatastrophe((message) => seen.push(message));
    reportCatastrophe('V8 lost the isolate');
    stop();
    reportCatastrophe('after unsubscribing');
    expect(seen).toEqual(['V8 lost the isolate']);
  });
});
