/**
 * Demo data for `cdsnap`: the "Northwind Coffee Roasters" organization (`demo`),
 * whose posts live under `content/demo/`, and a second, post-less organization
 * (`harbor`) that exists so tests can prove one organization never sees another's data.
 *
 * The rows are chosen to exercise the ordering and visibility rules of
 * decisions.md: position ties (D2), draft / archived blocks (D1), videos in every
 * status, blocks on several pages or none (D8), an offer without a link (D4),
 * and secrets that must never appear in any output (D4, D5).
 *
 * Every key below is a demo-only value committed in the open. Never reuse them.
 *
 * @example
 *   const db = new Database(":memory:");
 *   migrate(db);
 *   seedDemo(db); // true the first time, false afterwards
 */
import { createHash } from "node:crypto";
import type { Database } from "better-sqlite3";

export const DEMO_ORG_ID = "demo";
export const HARBOR_ORG_ID = "harbor";

/** Raw demo API keys (scopes 'read', 'read write', and 'read' for harbor). */
export const DEMO_READ_KEY = "cdsnap_demo_read_0f1e2d3c4b5a69788796a5b4c3d2e1f0";
export const DEMO_WRITE_KEY = "cdsnap_demo_write_8a7b6c5d4e3f201102132435465768a9";
export const HARBOR_READ_KEY = "cdsnap_harbor_read_1a2b3c4d5e6f708192a3b4c5d6e7f809";

interface SecretRow {
  readonly orgId: string;
  readonly name: string;
  readonly value: string;
}

// Distinctive, unique values so a leak test can grep the whole output tree for them.
// One holds a double quote and a backslash, which JSON must escape: a leak through
// JSON.stringify would then appear as `\"` / `\\`, and the tests should look for both forms.
const SECRETS: readonly SecretRow[] = [
  { orgId: "demo", name: "stripe_secret_key", value: "sk_test_DEMO_SECRET_9c1b4e7a2f6d80531e" },
  { orgId: "demo", name: "smtp_password", value: 'DEMO-smtp-pa"ss\\word-5e8f1a3c7b9d' },
  { orgId: "demo", name: "oauth_refresh_token", value: "1//DEMO-oauth-refresh-3b7c9e2d4f6a8b0c" },
  { orgId: "demo", name: "meta_capi_access_token", value: "EAAB-DEMO-capi-token-6d2f8a4c0e1b3957" },
  { orgId: "harbor", name: "stripe_secret_key", value: "sk_test_HARBOR_SECRET_a4d2c6e8f0b13579" },
  { orgId: "harbor", name: "smtp_password", value: "HARBOR-smtp-password-71c3e5a9b2d4f608" },
  { orgId: "harbor", name: "oauth_refresh_token", value: "1//HARBOR-oauth-refresh-c8e0a2b4d6f81357" },
];

/** Every value stored in organization_secrets, for leak tests. */
export const DEMO_SECRET_VALUES: readonly string[] = Object.freeze(SECRETS.map((s) => s.value));

interface OrganizationRow {
  readonly id: string;
  readonly name: string;
  readonly slug: string;
  readonly googleAnalyticsId: string | null;
  readonly metaPixelId: string | null;
  readonly gtmContainerId: string | null;
  readonly businessDescription: string;
  readonly allowedOrigins: string | null;
}

const ORGANIZATIONS: readonly OrganizationRow[] = [
  {
    id: "demo",
    name: "Northwind Coffee Roasters",
    slug: "northwind",
    googleAnalyticsId: "G-DEMO12345",
    metaPixelId: null,
    gtmContainerId: "GTM-DEMO1",
    businessDescription:
      "Northwind Coffee Roasters is a small-batch specialty coffee roastery with two cafés on the waterfront. " +
      "We buy green coffee directly from producers in Ethiopia, Colombia and Kenya, pay well above the commodity price, " +
      "and roast light to medium so every origin tastes like itself.",
    allowedOrigins: null,
  },
  {
    id: "harbor",
    name: "Harbor Tea House",
    slug: "harbor-tea",
    googleAnalyticsId: null,
    metaPixelId: null,
    gtmContainerId: null,
    businessDescription: "",
    allowedOrigins: '["https://harbor.example"]',
  },
];

interface OfferRow {
  readonly name: string;
  readonly description: string;
  readonly link: string | null;
}

const DEMO_OFFERS: readonly OfferRow[] = [
  {
    name: "Coffee subscription",
    description: "Freshly roasted single origins delivered every two or four weeks, with free shipping.",
    link: "https://northwind.example/subscribe",
  },
  {
    name: "Wholesale for cafés",
    description: "Roasted-to-order coffee, barista training and equipment support for cafés and restaurants.",
    link: "https://northwind.example/wholesale",
  },
  {
    name: "Home brewing class",
    description: "A two-hour hands-on class at our harbourside café covering pour-over, AeroPress and water.",
    link: null,
  },
];

interface CategoryRow {
  readonly orgId: string;
  readonly id: string;
  readonly slug: string;
  readonly value: string;
  readonly position: number;
}

// Position 1 is shared on purpose: by value ("Roast Lab" < "Single Origins") the
// roasting category comes first, although its id, its slug and its insertion order
// all come later. Only a correct value tie-break (D2) gets it right.
const CATEGORIES: readonly CategoryRow[] = [
  { orgId: "demo", id: "cat-brewing", slug: "brewing", value: "Brewing Guides", position: 0 },
  { orgId: "demo", id: "cat-origins", slug: "origins", value: "Single Origins", position: 1 },
  { orgId: "demo", id: "cat-roasting", slug: "roasting", value: "Roast Lab", position: 1 },
  { orgId: "demo", id: "cat-news", slug: "news", value: "News", position: 2 },
  // Used by no post.
  { orgId: "demo", id: "cat-equipment", slug: "equipment", value: "Equipment", position: 5 },
  // Same id as a demo category: organizations are separate namespaces.
  { orgId: "harbor", id: "cat-news", slug: "news", value: "Harbor News", position: 0 },
  { orgId: "harbor", id: "cat-teaware", slug: "teaware", value: "Teaware", position: 1 },
];

type FieldRow =
  | { readonly key: string; readonly type: "text"; readonly value: string }
  | { readonly key: string; readonly type: "image"; readonly value: { readonly url: string; readonly alt: string } }
  | {
      readonly key: string;
      readonly type: "video";
      readonly value: { readonly url: string; readonly status: "ready" | "processing" | "failed" };
    };

interface BlockRow {
  readonly orgId: string;
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly status: "draft" | "published" | "archived";
  readonly position: number;
  readonly pages: readonly string[];
  readonly fields: readonly FieldRow[];
}

// Inserted in this order on purpose (not sorted), so a listing that forgets to sort
// shows up. Ties: position 1 holds blk-announcement and blk-about-story (id order puts
// blk-about-story first, while slug, name and insertion order all put the other first);
// position 2 holds blk-pricing-table and blk-pricing-faq.
const BLOCKS: readonly BlockRow[] = [
  {
    orgId: "demo",
    id: "blk-hero",
    slug: "home-hero",
    name: "Home hero",
    status: "published",
    position: 0,
    pages: ["home"],
    fields: [
      { key: "headline", type: "text", value: "Coffee roasted on the waterfront" },
      {
        key: "subheadline",
        type: "text",
        value: "Small batches, direct trade, and a café where \"one more cup\" is always welcome.",
      },
      {
        key: "background",
        type: "image",
        value: { url: "https://cdn.example.com/northwind/hero-roastery.jpg", alt: "The Northwind roaster at sunrise" },
      },
      {
        key: "intro_video",
        type: "video",
        value: { url: "https://cdn.example.com/northwind/video/roast-day.mp4", status: "ready" },
      },
    ],
  },
  {
    orgId: "demo",
    id: "blk-announcement",
    slug: "announcement-bar",
    name: "Announcement bar",
    status: "published",
    position: 1,
    pages: ["home", "blog"],
    fields: [
      { key: "message", type: "text", value: "Our harbourside café is now open – come say hello!" },
      { key: "icon", type: "image", value: { url: "/images/icons/megaphone.svg", alt: "Megaphone icon" } },
    ],
  },
  {
    orgId: "demo",
    id: "blk-about-story",
    slug: "roastery-story",
    name: "Roastery story",
    status: "published",
    position: 1,
    pages: ["about"],
    fields: [
      { key: "title", type: "text", value: "From a garage to two cafés" },
      {
        key: "body",
        type: "text",
        value:
          "We started with a five-kilo roaster in a rented garage.\n\nTen years later we roast for two cafés, " +
          "a few hundred subscribers and the best restaurants in town.",
      },
      {
        key: "photo",
        type: "image",
        value: { url: "https://cdn.example.com/northwind/founders.jpg", alt: "Maya and Tomás in front of the first roaster" },
      },
    ],
  },
  {
    orgId: "demo",
    id: "blk-pricing-table",
    slug: "subscription-plans",
    name: "Subscription plans",
    status: "published",
    position: 2,
    pages: ["pricing"],
    fields: [
      { key: "plan_1", type: "text", value: "Explorer – 250 g every two weeks – $18" },
      { key: "plan_2", type: "text", value: "Regular – 500 g every two weeks – $32" },
      { key: "plan_3", type: "text", value: "Café at home – 1 kg every two weeks – $58" },
      {
        key: "explainer",
        type: "video",
        value: { url: "https://cdn.example.com/northwind/video/subscriptions.mp4", status: "processing" },
      },
    ],
  },
  {
    orgId: "demo",
    id: "blk-pricing-faq",
    slug: "pricing-faq",
    name: "Pricing FAQ",
    status: "published",
    position: 2,
    pages: ["pricing"],
    fields: [
      { key: "question_1", type: "text", value: "Can I pause my subscription?" },
      { key: "answer_1", type: "text", value: "Yes, any time before the next roast day, from your account page." },
    ],
  },
  {
    orgId: "demo",
    id: "blk-team-video",
    slug: "meet-the-roasters",
    name: "Meet the roasters",
    status: "published",
    position: 3,
    pages: ["about"],
    fields: [
      { key: "caption", type: "text", value: "Meet the people behind every batch." },
      {
        key: "video",
        type: "video",
        value: { url: "/media/video/meet-the-roasters.mp4", status: "failed" },
      },
      { key: "poster", type: "image", value: { url: "/images/team/poster.jpg", alt: "The Northwind team" } },
    ],
  },
  {
    orgId: "demo",
    id: "blk-blog-sidebar",
    slug: "blog-sidebar",
    name: "Blog sidebar",
    status: "published",
    position: 0,
    pages: ["blog"],
    fields: [{ key: "about", type: "text", value: "Stories from the roastery floor, twice a month." }],
  },
  {
    orgId: "demo",
    id: "blk-newsletter",
    slug: "newsletter-signup",
    name: "Newsletter signup",
    status: "published",
    position: 10,
    pages: [], // attached to no page: listed without a filter, never with one
    fields: [
      { key: "title", type: "text", value: "Get first dibs on new coffees" },
      { key: "button_label", type: "text", value: "Subscribe" },
    ],
  },
  {
    orgId: "demo",
    id: "blk-holiday-promo",
    slug: "holiday-promo",
    name: "Holiday promo",
    status: "draft",
    position: 0,
    pages: ["home"],
    fields: [{ key: "message", type: "text", value: "DRAFT-BLOCK-CANARY-4e1d: 25% off gift boxes" }],
  },
  {
    orgId: "demo",
    id: "blk-summer-sale",
    slug: "summer-sale-banner",
    name: "Summer sale banner",
    status: "archived",
    position: 1,
    pages: ["home", "pricing"],
    fields: [{ key: "message", type: "text", value: "ARCHIVED-BLOCK-CANARY-9a6c: summer sale, up to 30% off" }],
  },
  // Harbor reuses the id and slug of a demo block: separate namespaces.
  {
    orgId: "harbor",
    id: "blk-hero",
    slug: "home-hero",
    name: "Harbor hero",
    status: "published",
    position: 0,
    pages: ["home"],
    fields: [
      { key: "headline", type: "text", value: "Loose-leaf tea by the water" },
      { key: "background", type: "image", value: { url: "https://cdn.example.com/harbor/teapot.jpg", alt: "A teapot on a pier" } },
    ],
  },
  {
    orgId: "harbor",
    id: "blk-tea-menu",
    slug: "tea-menu",
    name: "Tea menu",
    status: "published",
    position: 1,
    pages: ["menu"],
    fields: [{ key: "intro", type: "text", value: "Green, oolong, black and herbal, brewed to order." }],
  },
];

interface ApiKeyRow {
  readonly id: string;
  readonly orgId: string;
  readonly rawKey: string;
  readonly scopes: "read" | "read write";
}

const API_KEYS: readonly ApiKeyRow[] = [
  { id: "demo-read", orgId: "demo", rawKey: DEMO_READ_KEY, scopes: "read" },
  { id: "demo-write", orgId: "demo", rawKey: DEMO_WRITE_KEY, scopes: "read write" },
  { id: "harbor-read", orgId: "harbor", rawKey: HARBOR_READ_KEY, scopes: "read" },
];

function sha256Hex(raw: string): string {
  return createHash("sha256").update(raw, "utf8").digest("hex");
}

/**
 * Inserts the demo rows in one transaction; does nothing when organization 'demo'
 * already exists. Returns true when it seeded.
 * The tables must already exist (the migrations create them).
 */
export function seedDemo(db: Database, now: Date = new Date()): boolean {
  const createdAt = now.toISOString();

  const findOrg = db.prepare("SELECT 1 FROM organizations WHERE id = ?");
  const insertOrg = db.prepare(
    "INSERT INTO organizations (id, name, slug, google_analytics_id, meta_pixel_id, gtm_container_id, business_description, allowed_origins) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertSecret = db.prepare("INSERT INTO organization_secrets (org_id, name, value) VALUES (?, ?, ?)");
  const insertOffer = db.prepare(
    "INSERT INTO business_offers (org_id, position, name, description, link) VALUES (?, ?, ?, ?, ?)",
  );
  const insertCategory = db.prepare(
    "INSERT INTO categories (org_id, id, slug, value, position) VALUES (?, ?, ?, ?, ?)",
  );
  const insertBlock = db.prepare(
    "INSERT INTO blocks (org_id, id, slug, name, status, position) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const insertField = db.prepare(
    "INSERT INTO block_fields (org_id, block_id, position, key, type, value) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const insertPage = db.prepare("INSERT INTO block_pages (org_id, block_id, page) VALUES (?, ?, ?)");
  const insertKey = db.prepare(
    "INSERT INTO api_keys (id, org_id, key_sha256, scopes, label, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, NULL)",
  );

  const seed = db.transaction((): boolean => {
    if (findOrg.get(DEMO_ORG_ID) !== undefined) return false;

    for (const o of ORGANIZATIONS) {
      insertOrg.run(
        o.id,
        o.name,
        o.slug,
        o.googleAnalyticsId,
        o.metaPixelId,
        o.gtmContainerId,
        o.businessDescription,
        o.allowedOrigins,
      );
    }
    for (const s of SECRETS) insertSecret.run(s.orgId, s.name, s.value);
    DEMO_OFFERS.forEach((offer, position) => {
      insertOffer.run(DEMO_ORG_ID, position, offer.name, offer.description, offer.link);
    });
    for (const c of CATEGORIES) insertCategory.run(c.orgId, c.id, c.slug, c.value, c.position);
    for (const b of BLOCKS) {
      insertBlock.run(b.orgId, b.id, b.slug, b.name, b.status, b.position);
      b.fields.forEach((field, position) => {
        insertField.run(b.orgId, b.id, position, field.key, field.type, JSON.stringify(field.value));
      });
      for (const page of b.pages) insertPage.run(b.orgId, b.id, page);
    }
    for (const k of API_KEYS) insertKey.run(k.id, k.orgId, sha256Hex(k.rawKey), k.scopes, "demo", createdAt);
    return true;
  });

  return seed();
}
