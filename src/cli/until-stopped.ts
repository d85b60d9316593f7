/**
 * The long-running commands (serve, demo, edge) run until Ctrl-C or SIGTERM,
 * then close what they started, so in-flight requests and the hook's due runs
 * finish before the process exits.
 */
export function untilStopped(close: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      void close().then(resolve);
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
}
