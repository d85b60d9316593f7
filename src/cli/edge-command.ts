import { Option, type Command } from "commander";
import { existsSync } from "node:fs";
import { UsageError } from "../errors.js";
import { listenRefusal, type AddressFlags } from "./listen-error.js";
import { absolute, dbOption, hostOption, outOption, wholeNumber } from "./options.js";
import { untilStopped } from "./until-stopped.js";

const EDGE_ADDRESS_FLAGS: AddressFlags = { port: "--port <n> or CDSNAP_EDGE_PORT", host: "--host or CDSNAP_HOST" };

const edgePortOption = () =>
  new Option("--port <n>", "port to listen on (0 picks a free one)")
    .env("CDSNAP_EDGE_PORT")
    .default(8788)
    .argParser(wholeNumber("--port", 0, 65535));

const originOption = (what: string) => new Option("--origin <url>", what).env("CDSNAP_ORIGIN").argParser(httpUrl);

function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--origin must be a URL such as https://origin.example.com; got "${value}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--origin must be an http or https URL; got "${value}"`);
  return url.origin;
}

/** `cdsnap edge …`: the read API at the edge (docs/edge.md). */
export function registerEdge(program: Command): void {
  const edge = program.command("edge").description("the read API on an edge platform (Cloudflare Workers, or Node): keys, project, local runtime");

  edge
    .command("keys")
    .description("write the edge document (key hashes, scopes, revocations, allowed origins, page membership) beside the tree")
    .addOption(dbOption())
    .addOption(outOption())
    .action(async (flags: { db: string; out: string }) => {
      const { assertPublishedTree } = await import("../server/published-tree.js");
      const { openContractDatabase } = await import("../db/contract-schema.js");
      const { writeEdgeDocument } = await import("../edge/publish-document.js");
      assertPublishedTree(flags.out, flags.db);
      const db = openContractDatabase(absolute(flags.db), { readonly: true });
      try {
        process.stdout.write(`${writeEdgeDocument(db, absolute(flags.out))}\n`);
      } finally {
        db.close();
      }
    });

  edge
    .command("init")
    .description("write a Cloudflare Workers project that serves the built tree with the edge handler")
    .addOption(outOption())
    .requiredOption("--to <dir>", "the project folder to write (made if missing; files cdsnap writes are replaced)")
    .option("--name <name>", "the worker's name", "cdsnap-edge")
    .addOption(originOption("the origin (`cdsnap serve`) that PATCHes are passed to"))
    .action(async (flags: { out: string; to: string; name: string; origin?: string }) => {
      const { initEdgeProject } = await import("../edge/edge-init.js");
      const written = await initEdgeProject({ out: absolute(flags.out), to: absolute(flags.to), name: flags.name, origin: flags.origin });
      for (const file of written) process.stdout.write(`${file}\n`);
      process.stderr.write(`next: follow ${absolute(flags.to)}/README.md (a KV namespace for the edge document, then npx wrangler deploy)\n`);
    });

  edge
    .command("dev")
    .description("run the edge handler locally in the Workers runtime (workerd, through miniflare), with `serve` as its origin")
    .addOption(dbOption())
    .addOption(outOption())
    .addOption(hostOption())
    .addOption(edgePortOption())
    .addOption(originOption("pass PATCHes to this origin instead of a `serve` started here"))
    .action(async (flags: { db: string; out: string; host: string; port: number; origin?: string }) => {
      const { startEdgeDev } = await import("../edge/edge-dev.js");
      const before = { SIGINT: process.listeners("SIGINT"), SIGTERM: process.listeners("SIGTERM") };
      const dev = await startEdgeDev({ db: absolute(flags.db), out: absolute(flags.out), host: flags.host, port: flags.port, origin: flags.origin }).catch(
        (error: unknown) => {
          throw listenRefusal(error, EDGE_ADDRESS_FLAGS);
        },
      );
      // miniflare exits on a signal at once (status 143); closing here lets the origin finish its requests first.
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        for (const listener of process.listeners(signal)) if (!before[signal].includes(listener)) process.off(signal, listener);
      }
      process.stdout.write(`cdsnap edge dev serving ${dev.url} (workerd; PATCHes go to ${dev.origin})\n`);
      await untilStopped(() => dev.close());
    });

  edge
    .command("serve")
    .description("run the edge handler under Node: the tree and the edge document from disk, PATCHes passed to --origin")
    .addOption(outOption())
    .addOption(hostOption())
    .addOption(edgePortOption())
    .addOption(originOption("the origin (`cdsnap serve`) that PATCHes are passed to"))
    .action(async (flags: { out: string; host: string; port: number; origin?: string }) => {
      const { assertPublishedTree } = await import("../server/published-tree.js");
      const { edgeDocumentFileOf } = await import("../edge/publish-document.js");
      const { startEdgeServer } = await import("../edge/node-adapter.js");
      assertPublishedTree(flags.out, "<database>");
      if (!existsSync(edgeDocumentFileOf(flags.out))) {
        throw new UsageError(`there is no edge document at ${edgeDocumentFileOf(flags.out)}; write it with: cdsnap edge keys --db <database> --out ${absolute(flags.out)}`);
      }
      const running = await startEdgeServer({ out: absolute(flags.out), host: flags.host, port: flags.port, origin: flags.origin }).catch(
        (error: unknown) => {
          throw listenRefusal(error, EDGE_ADDRESS_FLAGS);
        },
      );
      process.stdout.write(`cdsnap edge serving ${running.url}\n`);
      await untilStopped(() => running.close());
    });
}
