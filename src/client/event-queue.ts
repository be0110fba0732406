/** One subscriber's view of a task's events: pushed by the handle, pulled by `for await`. */
export class EventQueue<T> implements AsyncIterableIterator<T> {
  private readonly buffered: T[] = [];
  private waiting: { resolve(r: IteratorResult<T>): void; reject(e: unknown): void } | undefined;
  private ended = false;
  private failure: unknown;

  constructor(private readonly onReturn: () => void) {}

  push(value: T): void {
    if (this.ended) return;
    if (this.waiting) {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting.resolve({ value, done: false });
    } else this.buffered.push(value);
  }

  /** Ends the iteration once the buffered events are read (with `error`, it then throws). */
  end(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = error;
    if (this.waiting && this.buffered.length === 0) {
      const waiting = this.waiting;
      this.waiting = undefined;
      if (error !== undefined) waiting.reject(error);
      else waiting.resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<T>> {
    const value = this.buffered.shift();
    if (value !== undefined) return Promise.resolve({ value, done: false });
    if (this.ended) {
      const failure = this.failure;
      this.failure = undefined;
      return failure !== undefined ? Promise.reject(failure) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.ended = true;
    this.buffered.length = 0;
    this.onReturn();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
