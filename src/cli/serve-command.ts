import { InvalidArgumentError, Option, type Command } from "commander";
import { DEFAULT_AUTH_FAILURE_RATE, DEFAULT_WRITE_RATE, startServer } from "../server/create-server.js";
import { absolute, contentOption, dbOption, outOption } from "./options.js";

function positiveInt(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
}

interface ServeFlags {
  db: string;
  content: string;
  out: string;
  host: string;
  port: number;
  writeRate: number;
  authFailureRate: number;
  clientAddressHeader?: string;
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("serve the tree with the API-key check, CORS and caching, and proxy the two PATCH endpoints")
    .addOption(dbOption())
    .addOption(contentOption())
    .addOption(outOption())
    .addOption(new Option("--host <host>", "address to listen on").env("CDSNAP_HOST").default("127.0.0.1"))
    .addOption(
      new Option("--port <n>", "port to listen on (0 picks a free one)")
        .env("CDSNAP_PORT")
        .default(8787)
        .argParser(positiveInt("--port", 0, 65535)),
    )
    .addOption(
      new Option("--write-rate <n>", "PATCH requests a minute per API key")
        .env("CDSNAP_WRITE_RATE")
        .default(DEFAULT_WRITE_RATE)
        .argParser(positiveInt("--write-rate", 1, 1_000_000)),
    )
    .addOption(
      new Option("--auth-failure-rate <n>", "requests with a missing or invalid API key a minute per client address (0: no limit)")
        .env("CDSNAP_AUTH_FAILURE_RATE")
        .default(DEFAULT_AUTH_FAILURE_RATE)
        .argParser(positiveInt("--auth-failure-rate", 0, 1_000_000)),
    )
    .addOption(
      new Option(
        "--client-address-header <name>",
        "the header your proxy or CDN sets to the client's address (e.g. x-forwarded-for); only when every request comes through it",
      ).env("CDSNAP_CLIENT_ADDRESS_HEADER"),
    )
    .action(async (flags: ServeFlags) => {
      const running = await startServer(
        Object.freeze({
          db: absolute(flags.db),
          out: absolute(flags.out),
          host: flags.host,
          port: flags.port,
          writeRate: flags.writeRate,
          authFailureRate: flags.authFailureRate,
          clientAddressHeader: flags.clientAddressHeader,
        }),
      );
      process.stdout.write(`cdsnap serving ${running.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off("SIGTERM", stop);
          process.off("SIGINT", stop);
          void running.close().then(resolve);
        };
        process.on("SIGTERM", stop);
        process.on("SIGINT", stop);
      });
    });
}
