/**
 * Requests posted across a thread boundary, each matched to its reply by a number: the
 * builder's builds, the serving threads' loop figures, their password checks.
 */
export class PendingReplies<Reply> {
  private next = 1;
  private readonly waiting = new Map<number, { readonly resolve: (reply: Reply) => void; readonly reject: (error: Error) => void }>();

  /** Requests still waiting for their reply. */
  get size(): number {
    return this.waiting.size;
  }

  /** Sends a request under a fresh number (`send` posts it) and waits for the reply with that number. */
  ask(send: (request: number) => void): Promise<Reply> {
    const request = this.next++;
    return new Promise<Reply>((resolve, reject) => {
      this.waiting.set(request, { resolve, reject });
      try {
        send(request);
      } catch (error) {
        this.waiting.delete(request);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /** Settles the request the reply answers; false when none waits for it (answered already, or never asked). */
  answer(request: number, reply: Reply): boolean {
    const waiting = this.waiting.get(request);
    if (!waiting) return false;
    this.waiting.delete(request);
    waiting.resolve(reply);
    return true;
  }

  /** Fails every request still waiting: the other side is gone. */
  failAll(error: Error): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const { reject } of waiting) reject(error);
  }
}
