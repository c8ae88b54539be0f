// A FIFO queue with O(1) amortised removal from the front (Array.shift is O(n), which a buffer
// of 100,000 items would pay for every item).

export class Queue<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The first `count` items, left in the queue (they leave only through `drop`). */
  peek(count: number): T[] {
    return this.items.slice(this.head, this.head + count);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.drop(1);
    return item;
  }

  /** Removes the first `count` items. */
  drop(count: number): void {
    this.head = Math.min(this.head + count, this.items.length);
    // Give the dropped slots back once they are the larger part.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
