/**
 * The worker module of a deployment: the bundled handler (`cdsnap-edge.js`,
 * a copy of dist/edge.js) made into a worker. `cdsnap edge init` writes it
 * into a project and `cdsnap edge dev` runs it, so both run the same code.
 */
export const EDGE_WORKER_SOURCE = `// The cdsnap read API on Cloudflare Workers: see README.md beside this file.
import { createWorker } from "./cdsnap-edge.js";

export default createWorker();
`;

/** The Workers behaviour the handler was tested with (a date the runtime in miniflare supports). */
export const WORKER_COMPATIBILITY_DATE = "2025-06-01";
