import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Every answer of a cdsnap server in the tests is judged against schemas/openapi.json.
    setupFiles: ["test/fixtures/openapi-recorder.ts"],
    // Upper bounds for a machine shared with other work, never what decides a pass: tests wait for events.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores: tests start real servers and child processes, more workers only contend.
    maxWorkers: 2,
  },
});
