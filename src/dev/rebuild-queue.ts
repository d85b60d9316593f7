/**
 * One build at a time, changes coalesced: what `cdsnap dev` runs on every file
 * event. Events only mark what is dirty (an organization's content folder, or
 * everything for a database change); one build runs for all of it once the
 * changes have been quiet for `debounceMs`, and whatever changes while that
 * build runs is picked up by one more build afterwards, after the same quiet.
 *
 * The quiet applies after a running build too, not only before the first: an
 * editor's save is several writes, and a file watcher folds writes close
 * together into one event (chokidar drops a file's `change` events for 50 ms
 * after the last one it reported). A build started at once after that event
 * could read the file before its last write, and that write would bring no
 * event of its own: the save would never be rebuilt.
 */

/** What to rebuild: the named organizations, or everything (`orgs: undefined`). */
export interface RebuildScope {
  orgs: string[] | undefined;
}

export interface RebuildQueue {
  /** Marks an organization's posts dirty; `undefined` marks everything. */
  touch(orgId: string | undefined): void;
  /**
   * Runs `build` as a build of the queue: changes marked meanwhile wait for it
   * and are built after it. `cdsnap dev` runs its first build this way, so a
   * save during that build is not lost.
   */
  runFirst<T>(build: () => Promise<T>): Promise<T>;
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
  let lastTouch = 0;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;
  let closed = false;
  const waiters: (() => void)[] = [];

  const dirty = () => all || orgs.size > 0;

  function settle(): void {
    if (running || timer || dirty()) return;
    for (const resolve of waiters.splice(0)) resolve();
  }

  function schedule(): void {
    if (running || closed || !dirty()) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(start, Math.max(0, lastTouch + debounceMs - performance.now()));
  }

  function track<T>(build: Promise<T>): Promise<T> {
    running = build;
    const done = () => {
      running = null;
      schedule();
      settle();
    };
    build.then(done, done);
    return build;
  }

  function start(): void {
    timer = null;
    if (running || closed) return;
    // A timer may fire before its delay as performance.now() counts it (libuv
    // starts it from the loop's time, taken before the call; ms under load):
    // the quiet is waited out in full, or a save still being written is read.
    if (performance.now() - lastTouch < debounceMs) return schedule();
    const scope: RebuildScope = { orgs: all ? undefined : [...orgs].sort() };
    all = false;
    orgs.clear();
    // The runner reports its own failures; a rejection here must not stop the queue.
    void track(run(scope)).catch(() => undefined);
  }

  return {
    touch(orgId) {
      if (closed) return;
      if (orgId === undefined) all = true;
      else orgs.add(orgId);
      lastTouch = performance.now();
      schedule();
    },
    runFirst(build) {
      if (running) throw new Error("runFirst: a build is already running");
      return track(build());
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
      // Waited for only: its failure went to whoever started it (runFirst's caller, or the runner's own report).
      await running?.catch(() => undefined);
      all = false;
      orgs.clear();
      settle();
    },
  };
}
