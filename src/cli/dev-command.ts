import type { Command } from "commander";
import { listenRefusal, SERVE_ADDRESS_FLAGS } from "./listen-error.js";
import { describeHookRun } from "../on-change/hook-runner.js";
import { absolute, contentOption, dbOption, hookOf, hostOption, onChangeOption, onChangeTimeoutOption, outOption, portOption } from "./options.js";

interface DevFlags {
  db: string;
  content: string;
  out: string;
  host: string;
  port: number;
  onChange?: string;
  onChangeTimeout: number;
  preview?: boolean;
}

/** `cdsnap dev`: build, serve, and rebuild on every change of the posts or the database until Ctrl-C. */
export function registerDev(program: Command): void {
  program
    .command("dev")
    .description("serve like `serve`, and rebuild whenever a post or the database changes (for authoring)")
    .addOption(dbOption())
    .addOption(contentOption())
    .addOption(outOption())
    .addOption(hostOption())
    .addOption(portOption())
    .option("--preview", "build and serve the preview tree too (build --preview): keys with the preview scope read drafts and scheduled posts as they are saved")
    .addOption(onChangeOption())
    .addOption(onChangeTimeoutOption())
    .action(async (flags: DevFlags) => {
      const { startDev } = await import("../dev/dev-server.js");
      const { previewHint } = await import("../dev/preview-hint.js");
      const { listOrgIds } = await import("../db/read-snapshot.js");
      const { openDatabase } = await import("../db/open.js");
      const hook = hookOf(flags, (run) => (run.status === "ok" ? process.stdout : process.stderr).write(`${describeHookRun(run)}\n`));
      const dev = await startDev(
        Object.freeze({
          db: absolute(flags.db),
          content: absolute(flags.content),
          out: absolute(flags.out),
          host: flags.host,
          port: flags.port,
          onChange: hook?.notify,
          preview: flags.preview,
        }),
      ).catch((error: unknown) => {
        throw listenRefusal(error, SERVE_ADDRESS_FLAGS);
      });
      // With no tree to serve yet, dev listens only once a build succeeds; until then Ctrl-C still stops it.
      await new Promise<void>((resolve, reject) => {
        const stop = (then: () => void) => {
          process.off("SIGTERM", onSignal);
          process.off("SIGINT", onSignal);
          void dev
            .close()
            .then(() => hook?.close())
            .then(then);
        };
        const onSignal = () => stop(resolve);
        process.on("SIGTERM", onSignal);
        process.on("SIGINT", onSignal);
        dev.listening.then(
          (url) => {
            process.stdout.write(`cdsnap dev serving ${url}; watching ${flags.content} and ${flags.db} (Ctrl-C stops)\n`);
            if (!flags.preview) return;
            const db = openDatabase(absolute(flags.db), { readonly: true });
            try {
              // The database as it was given: the printed command runs from where dev was started.
              process.stdout.write(`${previewHint(url, flags.db, listOrgIds(db))}\n`);
            } finally {
              db.close();
            }
          },
          (error: unknown) => stop(() => reject(listenRefusal(error, SERVE_ADDRESS_FLAGS))),
        );
      });
    });
}
