/**
 * Group commit: the items submitted during one turn of the event loop run as
 * one batch at the end of it (setImmediate), so that one transaction, and the
 * one commit (and fsync) that ends it, serves every write that arrived together.
 */

export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommit<T, R> {
  /** Settles with the item's own outcome once its batch has run. */
  submit(item: T): Promise<R>;
  /** Runs the queued items now: a closing server must not strand them. */
  flush(): void;
}

/**
 * `run` gets the items in submission order and returns one outcome per item,
 * in the same order. If it throws, every item of the batch fails with that error.
 */
export function createGroupCommit<T, R>(run: (items: readonly T[]) => Outcome<R>[]): GroupCommit<T, R> {
  let queue: { item: T; resolve: (value: R) => void; reject: (error: unknown) => void }[] = [];

  function flush(): void {
    const batch = queue;
    if (batch.length === 0) return;
    queue = [];
    let outcomes: Outcome<R>[];
    try {
      outcomes = run(batch.map((queued) => queued.item));
    } catch (error) {
      for (const queued of batch) queued.reject(error);
      return;
    }
    batch.forEach((queued, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) queued.resolve(outcome.value);
      else queued.reject(outcome.error);
    });
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ item, resolve, reject });
      });
    },
    flush,
  };
}
