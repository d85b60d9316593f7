// Pages are built ahead (the default); the adapter serves them and renders the
// pages under src/pages/live on each request, from the live collections.
import node from "@astrojs/node";
import { defineConfig } from "astro/config";

export default defineConfig({
  adapter: node({ mode: "standalone" }),
  experimental: { liveContentCollections: true },
});
