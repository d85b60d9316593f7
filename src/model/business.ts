/**
 * D7: the two writable organization attributes. The same schemas check a PATCH
 * body at the edge and the stored rows at build time, so what the proxy accepts
 * is exactly what the build accepts.
 */
import { z } from "zod";
import { SCHEMA_PATTERNS, codePointLength, hasForbiddenControl, isAbsoluteHttpUrl, normalizeNewlines } from "./rules.js";

function personText(min: number, max: number) {
  return z
    .string()
    .transform((value) => normalizeNewlines(value).trim())
    .refine((value) => value.isWellFormed(), { message: "must be well-formed Unicode (no lone surrogates)" })
    .refine((value) => !hasForbiddenControl(value), {
      message: "must not contain control characters other than tab and newline",
    })
    .refine((value) => codePointLength(value) >= min, {
      message: min === 1 ? "must not be empty" : `must be at least ${min} characters`,
    })
    .refine((value) => codePointLength(value) <= max, { message: `must be at most ${max} characters` })
    .meta({
      maxLength: max,
      pattern: SCHEMA_PATTERNS.personText,
      ...(min > 0 ? { allOf: [{ pattern: SCHEMA_PATTERNS.notBlank }] } : {}),
      description:
        `Trimmed and CR LF folded to LF, then ${min > 0 ? `${min}-` : "at most "}${max} characters (code points), ` +
        "no control character but tab and newline, well-formed Unicode (no lone surrogate). " +
        `${min > 0 ? "Not blank. " : ""}The schema checks the text as sent, so it also refuses the rare value the server ` +
        "would trim into shape (padding past the limit, a stray CR at an end).",
    });
}

export const MAX_DESCRIPTION = 10_000;
export const MAX_OFFERS = 50;

export const businessDescriptionValue = personText(0, MAX_DESCRIPTION);

const linkValue = z
  .string()
  .transform((value) => value.trim())
  .refine((value) => codePointLength(value) <= 2048, { message: "must be at most 2048 characters" })
  .refine(isAbsoluteHttpUrl, {
    message: "must be an absolute http: or https: URL without credentials",
  })
  .meta({
    maxLength: 2048,
    pattern: SCHEMA_PATTERNS.httpUrl,
    description:
      "An absolute http: or https: URL with a host and no credentials, at most 2048 characters once trimmed; it must " +
      "parse as a URL (WHATWG). `null` or no member: no link.",
  });

export const businessOfferValue = z
  .strictObject({
    name: personText(1, 120),
    description: personText(1, 2000),
    link: linkValue.nullable().optional(),
  })
  .transform(({ name, description, link }) => (link == null ? { name, description } : { name, description, link }));

export const businessOffersValue = z
  .array(businessOfferValue)
  .max(MAX_OFFERS, { message: `must hold at most ${MAX_OFFERS} offers` });

export const businessDescriptionBody = z.strictObject({ businessDescription: businessDescriptionValue });
export const businessOffersBody = z.strictObject({ businessOffers: businessOffersValue });

export type StoredOffer = z.output<typeof businessOfferValue>;
