import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Every answer of a cdsnap server in the tests is judged against schemas/openapi.json.
    setupFiles: ["test/fixtures/openapi-recorder.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: tests start real servers and child processes, more workers only contend.
    maxWorkers: 2,
  },
});
