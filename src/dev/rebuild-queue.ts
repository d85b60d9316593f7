/**
 * One build at a time, changes coalesced: what `cdsnap dev` runs on every file
 * event. Events only mark what is dirty (an organization's content folder, or
 * everything for a database change); after a short quiet period one build runs
 * for all of it, and whatever changes while that build runs is picked up by
 * exactly one more build afterwards.
 */

/** What to rebuild: the named organizations, or everything (`orgs: undefined`). */
export interface RebuildScope {
  orgs: string[] | undefined;
}

export interface RebuildQueue {
  /** Marks an organization's posts dirty; `undefined` marks everything. */
  touch(orgId: string | undefined): void;
  /** Resolves once no build is running or waiting. */
  idle(): Promise<void>;
  /** Stops scheduling, and waits for a running build to finish. */
  close(): Promise<void>;
}

/**
 * @example
 *   const queue = createRebuildQueue((scope) => build({ ...options, orgs: scope.orgs }), 100);
 *   queue.touch("demo");  // a post of demo changed
 *   queue.touch(undefined); // the database changed: everything
 */
export function createRebuildQueue(run: (scope: RebuildScope) => Promise<void>, debounceMs: number): RebuildQueue {
  let all = false;
  const orgs = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let closed = false;
  const waiters: (() => void)[] = [];

  const dirty = () => all || orgs.size > 0;

  function settle(): void {
    if (running || timer || dirty()) return;
    for (const resolve of waiters.splice(0)) resolve();
  }

  async function drain(): Promise<void> {
    while (dirty() && !closed) {
      const scope: RebuildScope = { orgs: all ? undefined : [...orgs].sort() };
      all = false;
      orgs.clear();
      // The runner reports its own failures; a rejection here must not stop the loop.
      await run(scope).catch(() => undefined);
    }
  }

  function start(): void {
    timer = null;
    if (running || closed) return;
    running = drain().finally(() => {
      running = null;
      settle();
    });
  }

  return {
    touch(orgId) {
      if (closed) return;
      if (orgId === undefined) all = true;
      else orgs.add(orgId);
      // A build in progress picks the change up when it ends (drain loops); otherwise wait for quiet.
      if (running) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(start, debounceMs);
    },
    idle() {
      return new Promise<void>((resolve) => {
        waiters.push(resolve);
        settle();
      });
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
      all = false;
      orgs.clear();
      settle();
    },
  };
}
