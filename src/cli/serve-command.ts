import { Option, type Command } from "commander";
import { hookLogLine } from "../on-change/hook-runner.js";
import { DEFAULT_AUTH_FAILURE_RATE, DEFAULT_WRITE_RATE } from "../server/rate-limit.js";
import { listenRefusal, SERVE_ADDRESS_FLAGS } from "./listen-error.js";
import {
  absolute,
  contentOption,
  dbOption,
  hookOf,
  hostOption,
  onChangeOption,
  onChangeTimeoutOption,
  outOption,
  portOption,
  scheduleOption,
  switchOn,
  wholeNumber,
} from "./options.js";
import { untilStopped } from "./until-stopped.js";

interface ServeFlags {
  db: string;
  content: string;
  out: string;
  host: string;
  port: number;
  writeRate: number;
  authFailureRate: number;
  clientAddressHeader?: string;
  onChange?: string;
  onChangeTimeout: number;
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("serve the tree with the API-key check, CORS and caching, and proxy the two PATCH endpoints")
    .addOption(dbOption())
    .addOption(contentOption())
    .addOption(outOption())
    .addOption(hostOption())
    .addOption(portOption())
    .addOption(
      new Option("--write-rate <n>", "PATCH requests a minute per API key")
        .env("CDSNAP_WRITE_RATE")
        .default(DEFAULT_WRITE_RATE)
        .argParser(wholeNumber("--write-rate", 1, 1_000_000)),
    )
    .addOption(
      new Option("--auth-failure-rate <n>", "requests with a missing or invalid API key a minute per client address (0: no limit)")
        .env("CDSNAP_AUTH_FAILURE_RATE")
        .default(DEFAULT_AUTH_FAILURE_RATE)
        .argParser(wholeNumber("--auth-failure-rate", 0, 1_000_000)),
    )
    .addOption(
      new Option(
        "--client-address-header <name>",
        "the header your proxy or CDN sets to the client's address (e.g. x-forwarded-for); only when every request comes through it",
      ).env("CDSNAP_CLIENT_ADDRESS_HEADER"),
    )
    .addOption(scheduleOption())
    .addOption(onChangeOption())
    .addOption(onChangeTimeoutOption())
    .action(async (flags: ServeFlags, command: Command) => {
      const schedule = switchOn(command, "schedule");
      const { defaultLogger, startServer } = await import("../server/create-server.js");
      const hook = hookOf(flags, (run) => defaultLogger(hookLogLine(run)));
      const running = await startServer(
        Object.freeze({
          db: absolute(flags.db),
          out: absolute(flags.out),
          host: flags.host,
          port: flags.port,
          writeRate: flags.writeRate,
          authFailureRate: flags.authFailureRate,
          clientAddressHeader: flags.clientAddressHeader,
          onChange: hook?.notify,
          schedule: schedule ? { content: absolute(flags.content) } : undefined,
        }),
      ).catch((error: unknown) => {
        throw listenRefusal(error, SERVE_ADDRESS_FLAGS);
      });
      process.stdout.write(`cdsnap serving ${running.url}\n`);
      // The changes committed before the stop still get their run (each bounded by the timeout).
      await untilStopped(() => running.close().then(() => hook?.close()));
    });
}
