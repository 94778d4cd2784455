import { describe, expect, it } from 'vitest';
import { PendingReplies } from './pending-replies.js';

describe('PendingReplies', () => {
  it('matches each reply to its request by number, whatever the order of the replies', async () => {
    const replies = new PendingReplies<string>();
    const sent: number[] = [];
    const first = replies.ask((request) => sent.push(request));
    const second = replies.ask((request) => sent.push(request));
    expect(sent).toHaveLength(2);
    expect(new Set(sent).size).toBe(2);
    expect(replies.size).toBe(2);
    expect(replies.answer(sent[1] as number, 'to the second')).toBe(true);
    expect(replies.answer(sent[0] as number, 'to the first')).toBe(true);
    await expect(first).resolves.toBe('to the first');
    await expect(second).resolves.toBe('to the second');
    expect(replies.size).toBe(0);
  });

  it('ignores a reply nobody waits for: answered already, or never asked', async () => {
    const replies = new PendingReplies<number>();
    let request = 0;
    const asked = replies.ask((n) => (request = n));
    expect(replies.answer(request, 1)).toBe(true);
    expect(replies.answer(request, 2)).toBe(false);
    expect(replies.answer(request + 1000, 3)).toBe(false);
    await expect(asked).resolves.toBe(1);
  });

  it('fails every waiting request when the other side is gone, and one whose sending failed', async () => {
    const replies = new PendingReplies<number>();
    const waiting = [replies.ask(() => undefined), replies.ask(() => undefined)];
    replies.failAll(new Error('the thread exited'));
    for (const promise of waiting) await expect(promise).rejects.toThrow('the thread exited');
    await expect(
      replies.ask(() => {
        throw new Error('cannot post');
      }),
    ).rejects.toThrow('cannot post');
    expect(replies.size).toBe(0);
  });
});
