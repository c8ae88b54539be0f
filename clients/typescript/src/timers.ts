// Timers that do not keep a Node process alive by themselves (unref), and can be made to when
// the caller is waiting on them (a buffer's close). In browsers timers are plain numbers and
// these are no-ops.

type Timer = ReturnType<typeof setTimeout>;

function setRef(timer: unknown, keepAlive: boolean): void {
  const handle = timer as { ref?: () => void; unref?: () => void };
  if (keepAlive) handle.ref?.();
  else handle.unref?.();
}

export function unrefInterval(callback: () => void, ms: number): ReturnType<typeof setInterval> {
  const timer = setInterval(callback, ms);
  setRef(timer, false);
  return timer;
}

/** A wait that can be made to keep the process alive later, and cut short. */
export class Sleep {
  private timer: Timer | undefined;
  private wake: (() => void) | undefined;
  readonly done: Promise<void>;

  constructor(ms: number, keepAlive: boolean) {
    this.done = new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
      setRef(this.timer, keepAlive);
    });
  }

  keepAlive(): void {
    if (this.timer !== undefined) setRef(this.timer, true);
  }

  cutShort(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.wake?.();
  }
}
