/**
 * One synthetic post: valid front matter (data-contract.md) and a GitHub-flavored
 * markdown body of 800–1,500 words with headings, lists, a table, a fenced code
 * block, links, emphasis and `[N]` reference markers. Pure: (seed, index) in,
 * the file's path and text out.
 */
import { AUTHORS, CATEGORIES, CODE_LANGS, SOURCES, TAGS, TITLE_WORDS, WORDS } from "./words.js";
import { chance, hex, int, pad, pick, pickDistinct, streamOf, type Rng } from "./prng.js";

export type PostStatus = "published" | "draft" | "archived" | "scheduled";

export interface GeneratedPost {
  id: string;
  slug: string;
  status: PostStatus;
  /** Relative to the content folder: `<orgId>/<yyyy>/<slug>.md`. */
  relPath: string;
  text: string;
}

export interface PostOptions {
  /** Forces a status (the bench adds posts that must be published). */
  status?: PostStatus;
}

const START = Date.UTC(2015, 0, 1);
const END = Date.UTC(2026, 5, 30); // before any run of this bench: nothing "published" turns scheduled
const DAY = 86_400_000;

/** JSON strings are valid YAML double-quoted scalars: no quoting rule to get wrong. */
const q = (value: string) => JSON.stringify(value);

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

function words(rng: Rng, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(pick(rng, WORDS));
  return out;
}

function publishDate(rng: Rng, status: PostStatus): string {
  if (status === "scheduled") return `2099-${pad(int(rng, 1, 12), 2)}-${pad(int(rng, 1, 28), 2)}`;
  const day = new Date(START + Math.floor(rng() * ((END - START) / DAY)) * DAY).toISOString().slice(0, 10);
  const form = rng();
  if (form < 0.5) return day;
  const time = `${pad(int(rng, 0, 23), 2)}:${pad(int(rng, 0, 59), 2)}`;
  if (form < 0.8) return `${day}T${time}:${pad(int(rng, 0, 59), 2)}Z`;
  if (form < 0.9) return `${day}T${time}:00+02:00`;
  return `${day}T${time}:00.250Z`;
}

interface BodyContext {
  rng: Rng;
  refs: number;
  count: number;
}

function sentence(ctx: BodyContext): string {
  const { rng } = ctx;
  const parts = words(rng, int(rng, 6, 18));
  ctx.count += parts.length;
  const i = int(rng, 1, parts.length - 1);
  const style = rng();
  if (style < 0.08) parts[i] = `*${parts[i]}*`;
  else if (style < 0.14) parts[i] = `**${parts[i]}**`;
  else if (style < 0.18) parts[i] = `\`${parts[i]}\``;
  else if (style < 0.24) parts[i] = `[${parts[i]} ${pick(rng, WORDS)}](https://example.com/${pick(rng, WORDS)}/${hex(rng, 6)})`;
  else if (style < 0.25) parts[i] = `~~${parts[i]}~~`;
  else if (style < 0.26) parts[i] = `https://www.example.org/${pick(rng, WORDS)}`;
  if (parts.length > 10 && chance(rng, 0.3)) parts[5] = `${parts[5]},`;
  const marker = ctx.refs > 0 && chance(rng, 0.12) ? ` [${int(rng, 1, ctx.refs)}]` : "";
  return `${capitalize(parts.join(" "))}${marker}.`;
}

function paragraph(ctx: BodyContext): string {
  const out: string[] = [];
  for (let n = int(ctx.rng, 3, 6); n > 0; n--) out.push(sentence(ctx));
  return out.join(" ");
}

function heading(ctx: BodyContext, level: number): string {
  const title = words(ctx.rng, int(ctx.rng, 2, 6));
  ctx.count += title.length;
  return `${"#".repeat(level)} ${capitalize(title.join(" "))}`;
}

function list(ctx: BodyContext, ordered: boolean): string {
  const { rng } = ctx;
  const task = !ordered && chance(rng, 0.2);
  const items: string[] = [];
  for (let i = 1, n = int(rng, 3, 6); i <= n; i++) {
    const item = words(rng, int(rng, 3, 12));
    ctx.count += item.length;
    const bullet = ordered ? `${i}.` : task ? `- [${chance(rng, 0.5) ? "x" : " "}]` : "-";
    items.push(`${bullet} ${capitalize(item.join(" "))}`);
  }
  return items.join("\n");
}

function table(ctx: BodyContext): string {
  const { rng } = ctx;
  const rows = [`| ${capitalize(pick(rng, WORDS))} | Before | After |`, "| --- | ---: | ---: |"];
  for (let n = int(rng, 3, 5); n > 0; n--) {
    rows.push(`| ${pick(rng, WORDS)} ${pick(rng, WORDS)} | ${int(rng, 10, 999)} ms | ${int(rng, 1, 99)} ms |`);
    ctx.count += 4;
  }
  return rows.join("\n");
}

function codeBlock(ctx: BodyContext): string {
  const { rng } = ctx;
  const lines = [`\`\`\`${pick(rng, CODE_LANGS)}`];
  for (let n = int(rng, 4, 10); n > 0; n--) {
    lines.push(`${"  ".repeat(int(rng, 0, 2))}const ${pick(rng, WORDS)}_${hex(rng, 3)} = ${pick(rng, WORDS)}(${int(rng, 0, 999)});`);
  }
  lines.push("```");
  return lines.join("\n");
}

function body(rng: Rng, refs: number): string {
  const ctx: BodyContext = { rng, refs, count: 0 };
  // A section adds up to ~150 words past the target: aim a little low.
  const target = int(rng, 800, 1330);
  const blocks = [paragraph(ctx), paragraph(ctx)];
  // Sections 1-3 carry the table, the code block and the ordered list: always there.
  for (let section = 0; section < 4 || ctx.count < target; section++) {
    blocks.push(heading(ctx, 2), paragraph(ctx));
    if (section === 1) blocks.push(table(ctx));
    else if (section === 2) blocks.push(codeBlock(ctx));
    else if (section === 3) blocks.push(list(ctx, true));
    const extra = rng();
    if (extra < 0.3) blocks.push(list(ctx, false));
    else if (extra < 0.45) blocks.push(`> ${paragraph(ctx)}`);
    else if (extra < 0.65) blocks.push(heading(ctx, 3), paragraph(ctx));
    if (ctx.count < target - 40) blocks.push(paragraph(ctx));
  }
  return `${blocks.join("\n\n")}\n`;
}

function frontMatter(rng: Rng, orgId: string, index: number, status: PostStatus): { lines: string[]; slug: string; date: string; refs: number } {
  const titleWords = pickDistinct(rng, TITLE_WORDS, int(rng, 2, 4)).concat(words(rng, int(rng, 1, 3)));
  const title = titleWords.map(capitalize).join(" ");
  const slug = `${slugify(title)}-${index}`;
  const date = publishDate(rng, status);
  const lines = [
    `id: post-${pad(index, 6)}`,
    `title: ${q(title)}`,
    `slug: ${slug}`,
    `status: ${status === "scheduled" ? "published" : status}`,
    `publishedAt: ${chance(rng, 0.2) ? q(date) : date}`,
    `authorName: ${q(pick(rng, AUTHORS))}`,
  ];
  if (chance(rng, 0.25)) lines.push(`excerpt: ${q(capitalize(words(rng, int(rng, 8, 30)).join(" ")) + ".")}`);
  if (chance(rng, 0.9)) lines.push(`category: ${pick(rng, CATEGORIES).slug}`);
  if (chance(rng, 0.7)) lines.push(`tags: [${pickDistinct(rng, TAGS, int(rng, 1, 5)).join(", ")}]`);
  if (chance(rng, 0.8)) {
    const url = chance(rng, 0.1) ? `/images/${orgId}/${hex(rng, 8)}.jpg` : `https://cdn.example.com/${orgId}/${hex(rng, 12)}.jpg`;
    lines.push("featuredImage:", `  url: ${q(url)}`, `  alt: ${q(capitalize(words(rng, int(rng, 3, 9)).join(" ")))}`);
  }
  if (chance(rng, 0.3)) {
    lines.push("seoMetadata:");
    if (chance(rng, 0.7)) lines.push(`  title: ${q(`${title} | ${orgId}`)}`);
    lines.push(`  description: ${q(capitalize(words(rng, int(rng, 10, 25)).join(" ")) + ".")}`);
  }
  let refs = 0;
  if (chance(rng, 0.75)) {
    refs = int(rng, 1, 5);
    lines.push("references:");
    for (let r = 0; r < refs; r++) {
      lines.push(`  - source: ${q(pick(rng, SOURCES))}`, `    url: https://${pick(rng, WORDS)}.example.org/${hex(rng, 10)}`);
      const asOf = rng();
      if (asOf < 0.4) lines.push(`    asOf: "${int(rng, 2010, 2025)}"`);
      else if (asOf < 0.55) lines.push(`    asOf: ${int(rng, 2010, 2025)}`);
      if (chance(rng, 0.6)) lines.push(`    claim: ${q(capitalize(words(rng, int(rng, 6, 16)).join(" ")) + ".")}`);
    }
  }
  return { lines, slug, date, refs };
}

function statusOf(rng: Rng): PostStatus {
  const r = rng();
  if (r < 0.93) return "published";
  if (r < 0.97) return "draft";
  if (r < 0.99) return "archived";
  return "scheduled";
}

/** Post number `index` (1-based) of the organization generated with `seed`. */
export function renderPost(orgId: string, seed: number, index: number, options: PostOptions = {}): GeneratedPost {
  const rng = streamOf(seed, "post", index);
  const drawn = statusOf(rng);
  const status = options.status ?? drawn;
  const fm = frontMatter(rng, orgId, index, status);
  const text = ["---", ...fm.lines, "---", body(rng, fm.refs)].join("\n");
  return {
    id: `post-${pad(index, 6)}`,
    slug: fm.slug,
    status,
    relPath: `${orgId}/${fm.date.slice(0, 4)}/${fm.slug}.md`,
    text,
  };
}
