/**
 * The library surface of cdsnap. Frontends import the response types and the
 * typed client from `cdsnap/client` (no Node dependencies); tools and tests use
 * the build and the server from here.
 */
export { build, type BuildOptions } from "./build.js";
export type { BuildReport, OrgReport } from "./report.js";
export { startServer, type ServeOptions, type RunningServer } from "./server/create-server.js";
export { startDev, type DevOptions, type RunningDev } from "./dev/dev-server.js";
export { checkSources, type CheckOptions, type CheckResult } from "./check/check-sources.js";
export type { Finding, Severity } from "./check/lint-rules.js";
export { pathOf, parseApiPath, fileOf, routeOfFile, type Route, type RouteKind } from "./api-paths.js";
export { ROUTES, ERROR_STATUS, OPERATIONS, cacheTagsOf, entityTagOf, type ServerErrorCode } from "./route-table.js";
export { createChangeHook, type ChangeHook, type ChangeHookOptions, type HookRun } from "./on-change/hook-runner.js";
export type { Change } from "./on-change/change-set.js";
export { changeEventSchema, type ChangeEvent } from "./model/change-event.js";
export { CdsnapError, InvalidSourcesError, UsageError, type Problem, type SourceWarning, type ErrorDetail } from "./errors.js";
export * from "./model/api.js";
export { businessDescriptionBody, businessOffersBody } from "./model/business.js";
export { frontMatterSchema } from "./model/sources.js";
