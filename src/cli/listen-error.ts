import { UsageError } from "../errors.js";

/** How the command that failed to listen takes its address: what to tell a person to change. */
export interface AddressFlags {
  /** How to pick another port, e.g. "--port <n> or CDSNAP_PORT". */
  port: string;
  /** How to pick another address; absent when the command has no such flag. */
  host?: string;
}

export const SERVE_ADDRESS_FLAGS: AddressFlags = { port: "--port <n> or CDSNAP_PORT", host: "--host or CDSNAP_HOST" };

/**
 * The usage error for a server that could not listen because of how it was
 * called (a busy port, a port that needs privileges, an address this machine
 * does not have), naming the address and the flag that changes it; any other
 * error is returned as it was.
 *
 * @example
 *   await startServer(options).catch((error) => { throw listenRefusal(error, SERVE_ADDRESS_FLAGS); });
 *   // cdsnap: cannot listen on 127.0.0.1:8787: another program is using this port; …
 */
export function listenRefusal(error: unknown, flags: AddressFlags): unknown {
  const e = error as NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string };
  if (e?.syscall === "getaddrinfo" && (e.code === "ENOTFOUND" || e.code === "EAI_AGAIN")) {
    return new UsageError(
      `cannot listen on ${e.hostname ?? "the host"}: no address is found for this host name; ` +
        `choose another with ${flags.host ?? "--host"} (127.0.0.1 for this machine only, 0.0.0.0 for every network)`,
    );
  }
  if (e?.syscall !== "listen") return error;
  const where = e.address?.includes(":") ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`;
  const otherPort = `choose another port with ${flags.port} (0 picks a free one)`;
  switch (e.code) {
    case "EADDRINUSE":
      return new UsageError(`cannot listen on ${where}: another program is using this port; stop it, or ${otherPort}`);
    case "EACCES":
      return new UsageError(
        `cannot listen on ${where}: this user may not use port ${e.port} (ports below 1024 need administrator rights); ` +
          `choose a port from 1024 up with ${flags.port}`,
      );
    case "EADDRNOTAVAIL":
      return new UsageError(
        `cannot listen on ${where}: this machine has no such address; ` +
          `choose one of its own with ${flags.host ?? "--host"} (127.0.0.1 for this machine only, 0.0.0.0 for every network)`,
      );
    default:
      return error;
  }
}
