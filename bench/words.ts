/**
 * Fixed vocabularies of the synthetic organizations. Changing any list changes
 * every generated file: bump CACHE_VERSION in bench/cache.ts when you do.
 */
export const WORDS: readonly string[] = (
  "the a of and to in is that for it as with was on be by this are from at or an have not " +
  "but which one all were when we there can their has more been if will would about so than " +
  "other into time only new some could these two may first then do any like my now over such " +
  "our also made after most even through back where much before good those right because each " +
  "well still must between own while last might never under same another know around small " +
  "system data build server cache request response latency throughput storage network deploy " +
  "release version feature design product customer team project process quality review budget " +
  "schedule meeting roadmap strategy market growth revenue pricing partner support service " +
  "content article editor publish draft archive category tag search index query table column " +
  "record field value block page layout image video audio upload download stream buffer queue " +
  "worker thread process memory disk file folder path route handler module package library " +
  "framework runtime compiler browser client origin header status error warning message signal " +
  "metric dashboard alert incident outage recovery backup snapshot migration schema contract " +
  "interface endpoint token secret key scope permission policy audit compliance privacy security " +
  "coffee garden harbor river mountain forest city village market kitchen studio workshop office " +
  "morning evening weekend season summer winter spring autumn journey story lesson guide recipe " +
  "simple careful quick steady honest clear bright quiet strong gentle practical useful modest " +
  "measure improve reduce increase explain compare choose decide learn teach share listen write " +
  "read test ship plan fix change keep start finish open close move grow"
).split(" ");

export const TITLE_WORDS: readonly string[] = (
  "Building Scaling Shipping Measuring Designing Rethinking Debugging Caching Publishing Serving " +
  "Static Faster Smaller Simpler Reliable Honest Practical Modern Quiet Steady " +
  "Pipelines Builds Servers Snapshots Archives Teams Releases Budgets Roadmaps Gardens Harbors " +
  "Kitchens Workshops Stories Lessons Guides Recipes Metrics Dashboards Incidents Migrations " +
  "Without Beyond Behind Inside Across Under After Before Toward"
).split(" ");

export const AUTHORS: readonly string[] = [
  "Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Linus Pauling",
  "Maya Angelou", "Tomás Ortega", "Amara Okafor", "Li Wei", "Sofia Rossi",
  "Jonas Berg", "Priya Raman", "Kenji Watanabe", "Fatima Zahra", "Noah Levi",
  "Chloé Martin", "Diego Alvarez", "Ingrid Holm", "Kwame Mensah", "Zoë Fischer",
];

export const CATEGORIES: readonly { slug: string; value: string }[] = [
  { slug: "engineering", value: "Engineering" },
  { slug: "design", value: "Design" },
  { slug: "product", value: "Product" },
  { slug: "marketing", value: "Marketing" },
  { slug: "culture", value: "Culture" },
  { slug: "research", value: "Research" },
  { slug: "security", value: "Security" },
  { slug: "operations", value: "Operations" },
  { slug: "community", value: "Community" },
  { slug: "tutorials", value: "Tutorials" },
  { slug: "releases", value: "Releases" },
  { slug: "case-studies", value: "Case Studies" },
];

export const TAGS: readonly string[] = (
  "performance cdn caching static json api markdown sqlite node typescript security privacy " +
  "design ux accessibility seo analytics release roadmap hiring remote culture coffee travel " +
  "tutorial howto opinion research data testing devops incident postmortem"
).split(" ");

export const PAGES: readonly string[] = (
  "home about pricing blog contact careers faq team services products docs support press " +
  "partners events legal privacy terms shop news"
).split(" ");

export const SOURCES: readonly string[] = [
  "Example Weekly", "The Static Review", "Web Almanac", "Journal of Caching", "Open Data Digest",
  "Infrastructure Quarterly", "The Latency Report", "Field Notes", "Design Systems Monthly", "Harbor Gazette",
];

export const CODE_LANGS: readonly string[] = ["ts", "js", "sh", "json", "sql", "yaml"];
