import type { NextConfig } from "next";

const config: NextConfig = {
  // Answers need not say which server made them.
  poweredByHeader: false,
};

export default config;
