/**
 * Runs tasks one at a time in arrival order. The engine evaluates one request at a time, as a
 * single llama-server slot would, so the numbers a request reports are never mixed with another's.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve()

  /** Queues `task`; the returned promise settles with it. A failing task does not stop the queue. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task)
    this.tail = result.catch(() => undefined)
    return result
  }

  /** Resolves once every task queued so far has settled. */
  async idle(): Promise<void> {
    await this.tail
  }
}
