/**
 * Build progress on stderr: a redrawn bar on a terminal, a plain line every
 * quarter when not (CI logs stay readable), nothing for small builds or with
 * --quiet. Colors only on a terminal, and never with NO_COLOR set.
 */
const MIN_POSTS_FOR_PROGRESS = 500;
const BAR_WIDTH = 30;

export interface Style {
  ok(text: string): string;
  bad(text: string): string;
  dim(text: string): string;
}

export function styleFor(stream: NodeJS.WriteStream): Style {
  const color = stream.isTTY === true && !("NO_COLOR" in process.env);
  const paint = (code: number) => (text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
  return { ok: paint(32), bad: paint(31), dim: paint(2) };
}

export function createProgress(stream: NodeJS.WriteStream, quiet: boolean) {
  const tty = stream.isTTY === true;
  let lastDraw = 0;
  let lastQuarter = 0;
  let drawn = false;
  return {
    update(done: number, total: number): void {
      if (quiet || total < MIN_POSTS_FOR_PROGRESS) return;
      if (tty) {
        const now = Date.now();
        if (done !== total && now - lastDraw < 100) return;
        lastDraw = now;
        const filled = Math.round((done / total) * BAR_WIDTH);
        stream.write(`\r[${"#".repeat(filled)}${" ".repeat(BAR_WIDTH - filled)}] ${Math.floor((done / total) * 100)}% ${done}/${total} posts`);
        drawn = true;
        return;
      }
      const quarter = Math.floor((done / total) * 4);
      if (quarter > lastQuarter) {
        lastQuarter = quarter;
        stream.write(`posts: ${done}/${total} (${quarter * 25}%)\n`);
      }
    },
    /** Clears the bar before the report is printed. */
    finish(): void {
      if (drawn) stream.write("\r\u001b[2K");
      drawn = false;
    },
  };
}
