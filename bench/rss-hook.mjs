// Preloaded into each measured process with `node --import <this file>`: on exit
// it prints the process's peak resident set size (KiB on Linux) as a tagged
// line on stderr, which bench/measure.ts picks out. Worker threads count, child
// processes do not.
process.on("exit", () => {
  process.stderr.write(`\ncdsnap-bench-maxrss-kib=${process.resourceUsage().maxRSS}\n`);
});
