import { availableParallelism } from "node:os";

/** The threads a pool asks for: the variable's number (default every core), at least one, at most the cores. */
export function threadsWanted(variable: string): number {
  const asked = Math.floor(Number(process.env[variable] ?? availableParallelism())) || 1;
  return Math.max(1, Math.min(availableParallelism(), asked));
}
