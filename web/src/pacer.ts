// Pacer applies a stream's events in animation frames: all the text that
// arrived since the last frame at once, but one tool-card state change per
// frame (see takeFrame), so that no state is skipped on screen.

import { takeFrame } from './turn'
import type { HearthEvent } from './types'

/** Frame schedules a callback for the next frame. */
export type Frame = (f: () => void) => void

/** browserFrame uses animation frames, or a timeout in a hidden tab (which gets none). */
export const browserFrame: Frame = (f) => {
  if (typeof document !== 'undefined' && !document.hidden && typeof requestAnimationFrame === 'function') {
    requestAnimationFrame(f)
  } else {
    setTimeout(f, 0)
  }
}

/** hidden reports whether the page is not on screen (nothing is painted). */
export const pageHidden = () => typeof document !== 'undefined' && document.hidden

/**
 * Pacer queues events and hands them to apply frame by frame. While the
 * page is hidden nothing is painted, so it hands over all it has at once
 * (a hidden tab's timers are slowed to one a second, or a minute).
 */
export class Pacer {
  private queue: { ev: HearthEvent }[] = []
  private scheduled = false
  private generation = 0
  /** Calls whose output has begun: their next outputs need no frame of their own. */
  private streaming = new Set<string>()

  constructor(
    private readonly apply: (events: HearthEvent[]) => void,
    private readonly frame: Frame = browserFrame,
    private readonly hidden: () => boolean = pageHidden,
  ) {}

  /** flush applies everything queued now (the page was shown, or hidden). */
  flush(): void {
    // A frame already asked for does nothing when it comes (and may never
    // come: a hidden page gets none), so the next event asks anew.
    this.generation++
    this.scheduled = false
    this.take(this.queue.length)
  }

  /** push queues an event to be applied in a coming frame. */
  push(ev: HearthEvent): void {
    this.queue.push({ ev })
    this.schedule()
  }

  /** clear drops what is queued (the page moved to another session). */
  clear(): void {
    this.queue = []
    this.streaming.clear()
    this.generation++
    this.scheduled = false
  }

  /** pending is how many events wait for a frame. */
  get pending(): number {
    return this.queue.length
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    const gen = this.generation
    this.frame(() => {
      if (gen !== this.generation) return
      this.scheduled = false
      this.take(this.hidden() ? this.queue.length : takeFrame(this.queue, this.streaming)[0].length)
      if (this.queue.length > 0) this.schedule()
    })
  }

  private take(n: number): void {
    const now = this.queue.slice(0, n)
    this.queue = this.queue.slice(n)
    for (const q of now) if (q.ev.type === 'tool_output') this.streaming.add(q.ev.id)
    if (now.length > 0) this.apply(now.map((q) => q.ev))
  }
}
