import { InvalidArgumentError, Option, type Command } from "commander";
import { startDev } from "../dev/dev-server.js";
import { absolute, contentOption, dbOption, outOption } from "./options.js";

interface DevFlags {
  db: string;
  content: string;
  out: string;
  host: string;
  port: number;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("--port must be a whole number from 0 to 65535");
  return n;
}

/** `cdsnap dev`: build, serve, and rebuild on every change of the posts or the database until Ctrl-C. */
export function registerDev(program: Command): void {
  program
    .command("dev")
    .description("serve like `serve`, and rebuild whenever a post or the database changes (for authoring)")
    .addOption(dbOption())
    .addOption(contentOption())
    .addOption(outOption())
    .addOption(new Option("--host <host>", "address to listen on").env("CDSNAP_HOST").default("127.0.0.1"))
    .addOption(new Option("--port <n>", "port to listen on (0 picks a free one)").env("CDSNAP_PORT").default(8787).argParser(port))
    .action(async (flags: DevFlags) => {
      const dev = await startDev(
        Object.freeze({ db: absolute(flags.db), content: absolute(flags.content), out: absolute(flags.out), host: flags.host, port: flags.port }),
      );
      process.stdout.write(`cdsnap dev serving ${dev.url}; watching ${flags.content} and ${flags.db} (Ctrl-C stops)\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off("SIGTERM", stop);
          process.off("SIGINT", stop);
          void dev.close().then(resolve);
        };
        process.on("SIGTERM", stop);
        process.on("SIGINT", stop);
      });
    });
}
