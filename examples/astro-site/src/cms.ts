// Where the content comes from, read from the environment: at build time for
// the collections of content.config.ts, on each request for the live ones.
// A read key is enough, and all the site ever needs.
export const cms = {
  baseUrl: import.meta.env.CDSNAP_URL,
  apiKey: import.meta.env.CDSNAP_READ_KEY,
  orgId: import.meta.env.CDSNAP_ORG_ID,
};
